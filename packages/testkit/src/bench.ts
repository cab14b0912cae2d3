/**
 * The contract between `pnpm bench` (scripts/bench.ts, which runs it) and a server's own bench module
 * (servers/<name>/bench/latency.ts, which it imports): the module times its tools against the data source
 * underneath and may name the world and the cheap call the generic figures use.
 */
import type { ChildProcess } from "node:child_process";

/** A built server the bench started on loopback. */
export interface BenchServer {
  url: string;
  pid: number;
  child: ChildProcess;
  /** SIGKILL: the bench does not wait. */
  kill(): void;
}

export interface BenchContext {
  /**
   * Start the server's bundle with this environment (nothing from the developer's shell); `wrap` prefixes its
   * command (a booted systemd's nsenter: the server then runs in its PID and mount namespaces).
   */
  start(env: Record<string, string>, wrap?: readonly string[]): Promise<BenchServer>;
  /**
   * One call over HTTP with the client RoadNerd's own callers use (undici's `request`, as @roadnerd/client and
   * the gateway), reading the whole answer; rejects unless the status is `status` (default 200).
   */
  call(server: BenchServer, tool: string, input: Record<string, unknown>, status?: number): Promise<void>;
  /** The HTTP floor: GET /healthz over the same client, the whole answer read. */
  floor(server: BenchServer): Promise<void>;
  /**
   * p50/p95 of a tool against the data source underneath, measured the same way, back to back. `floor`: the
   * in-process floor, printed for information (no target mark); `info`: another figure printed for information
   * (a tool set to run the very command it is compared with); `withinMs`: the target is the tool's p50 at most
   * this much over the source's (dns_config_get-class tools against the HTTP floor).
   */
  pair(
    name: string,
    tool: () => Promise<unknown>,
    sourceLabel: string,
    source: () => Promise<unknown>,
    opts?: { floor?: boolean; info?: boolean; withinMs?: number },
  ): Promise<void>;
  /**
   * A tool against the command a user would type (argv, no shell, run as a shell runs it: fork/exec, output
   * discarded, exit status 0 required); when the program is not installed, a line that says so. `alt`: a second
   * command tried when the first program is missing (bash's /dev/tcp for `nc -z`); `info` as for `pair`.
   */
  pairCommand(
    name: string,
    tool: () => Promise<unknown>,
    argv: readonly string[],
    opts?: { alt?: readonly string[]; info?: boolean },
  ): Promise<void>;
}

/** One cheap call for the /mcp vs /actions comparison, and what to close after it. */
export interface BenchCall {
  tool: string;
  args: Record<string, unknown>;
  close(): void;
}

/** What servers/<name>/bench/latency.ts may export. */
export interface ServerBench {
  benchLatency?(b: BenchContext): Promise<void>;
  /** The world the generic figures (MCP cost, RSS curve) run in, when the example calls need one (a booted systemd). */
  world?(): Promise<{ env: Record<string, string>; close(): Promise<void> }>;
  cheapCall?(): Promise<BenchCall>;
}
