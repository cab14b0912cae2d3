/**
 * Ports's per-tool latency against the sources underneath, measured the same way in the same run: reading
 * /proc/net/{tcp,tcp6,udp,udp6} directly and spawning `ss` (through the kernel's exec, as the tools would).
 * The server runs twice, with SOCKETS_SOURCE=proc (the default) and =ss, so the choice of source is measured,
 * not assumed. A TCP listener of this process is the port looked up. Used by `pnpm bench`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { command, slot } from "@roadnerd/conventions";
import { testExec } from "@roadnerd/conventions/testing";
import type { BenchCall, BenchContext } from "@roadnerd/testkit";
import { ssListening } from "../src/listeners.ts";

/** What a user would type to answer "who holds this port": `ss -Hltnp sport = :PORT`. */
const ssSport = command("ss", ["-Hltnp", "sport", "=", slot("port", /^:\d{1,5}$/)]);
const exec = testExec([ssListening, ssSport]);
const EXEC_OPTIONS = { timeoutMs: 5_000 };
const TABLES = ["tcp", "tcp6", "udp", "udp6"].map((t) => `/proc/net/${t}`);

const readTables = () => Promise.all(TABLES.map((t) => readFile(t, "utf8")));

/** The bare cost of finding holders: every /proc/<pid>/fd link read, synchronously. */
function scanFds(): number {
  let n = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      n += readdirSync(`/proc/${pid}/fd`).length;
    } catch {}
  }
  return n;
}

export async function benchLatency(b: BenchContext): Promise<void> {
  const tcp = createServer((s) => s.destroy());
  await new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r));
  const port = (tcp.address() as AddressInfo).port;
  const viaProc = await b.start({});
  const viaSs = await b.start({ SOCKETS_SOURCE: "ss" });
  try {
    await b.pair(
      "listening_sockets",
      () => b.call(viaProc, "listening_sockets", {}),
      "read /proc/net/{tcp,udp}{,6}",
      readTables,
    );
    await b.pair(
      "listening_sockets",
      () => b.call(viaProc, "listening_sockets", {}),
      "spawn ss -Hltnup",
      () => exec(ssListening, undefined, EXEC_OPTIONS),
    );
    await b.pair(
      "listening_sockets (ss)",
      () => b.call(viaSs, "listening_sockets", {}),
      "spawn ss -Hltnup",
      () => exec(ssListening, undefined, EXEC_OPTIONS),
    );
    await b.pair(
      "who_uses_port",
      () => b.call(viaProc, "who_uses_port", { port }),
      "spawn ss -Hltnp sport = :PORT",
      () => exec(ssSport, { port: `:${port}` }, EXEC_OPTIONS),
    );
    await b.pair(
      "who_uses_port (ss)",
      () => b.call(viaSs, "who_uses_port", { port }),
      "spawn ss -Hltnp sport = :PORT",
      () => exec(ssSport, { port: `:${port}` }, EXEC_OPTIONS),
    );
    await b.pair(
      "who_uses_port",
      () => b.call(viaProc, "who_uses_port", { port }),
      `/proc/*/fd scan (${scanFds()} fds)`,
      async () => scanFds(),
    );
    await b.pair(
      "process_info {pid}",
      () => b.call(viaProc, "process_info", { pid: process.pid }),
      "read /proc/<pid>/stat+status+cmdline",
      async () => ["stat", "status", "cmdline"].map((f) => readFileSync(`/proc/${process.pid}/${f}`, "utf8")),
    );
    await b.pair(
      "process_info {name}",
      () => b.call(viaProc, "process_info", { name: "node" }),
      "read every /proc/<pid>/stat",
      async () =>
        readdirSync("/proc")
          .filter((p) => /^\d+$/.test(p))
          .map((p) => {
            try {
              return readFileSync(`/proc/${p}/stat`, "utf8");
            } catch {
              return "";
            }
          }),
    );
  } finally {
    viaProc.kill();
    viaSs.kill();
    tcp.close();
  }
}

/** A cheap call for the /mcp vs /actions comparison: who holds a listener of this process. */
export async function cheapCall(): Promise<BenchCall> {
  const tcp = createServer((s) => s.destroy());
  await new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r));
  return { tool: "who_uses_port", args: { port: (tcp.address() as AddressInfo).port }, close: () => tcp.close() };
}
