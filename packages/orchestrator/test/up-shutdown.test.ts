/**
 * Regression (issue 18, sealed attacker review of `roadnerd up`): SIGTERM with calls in flight, held by a silent
 * target with timeout_ms 15000. Every caller got E_BUSY, but the callers of a server's own port only at 4.03 s
 * (the gateway's 2 s grace, then the server's: one after the other), and `up` exited 13.6 s after the signal,
 * when the held calls' own deadline ran out: their outbound work was never cancelled. Now the gateway and the
 * servers drain at once (one grace period) and a server's close cancels what its calls still run, so the
 * answers come at the grace period and the process exits just after. The built `roadnerd up` (in-process,
 * network only, ports 0), a real SIGTERM, a listener that accepts and never answers. With `--processes` the
 * server processes were stopped only after the gateway's grace: their own callers waited for two in a row.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { type AddressInfo, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { SHUTDOWN_FLUSH_MS, SHUTDOWN_GRACE_MS } from "@roadnerd/conventions/internal";
import { REPO_ROOT } from "@roadnerd/registry";
import { pollUntil, scaledMs } from "@roadnerd/testkit";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MCP_HEADERS } from "./gateway-clients.ts";

const BIN = join(REPO_ROOT, "packages/orchestrator/dist/main.js");
const HELD_MS = 15_000;

/** Accepts and never answers: an http_check to it waits for its own deadline. */
const held: Socket[] = [];
const silent = createServer((socket) => {
  held.push(socket);
  socket.on("error", () => undefined);
});
let target: string;
let child: ChildProcessWithoutNullStreams | undefined;

beforeAll(async () => {
  silent.listen(0, "127.0.0.1");
  await once(silent, "listening");
  target = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
});
afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const s of held) s.destroy();
  await new Promise((r) => silent.close(r));
});

/** `roadnerd up network` on free ports: the server's and the gateway's URLs from its table. */
async function up(
  mode: readonly string[],
): Promise<{ server: string; gateway: string; proc: ChildProcessWithoutNullStreams }> {
  const proc = spawn(process.execPath, [BIN, "up", "network", ...mode, "--port", "0", "--set", "network.PORT=0"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ROADNERD_ATTACH_TIMEOUT_MS: "120000" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  proc.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  let stderr = "";
  proc.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  await pollUntil(() => stdout.includes("gateway (MCP)") && stderr.includes("Ctrl-C stops"), scaledMs(60_000));
  // One server asked for: the line says which, not "every server".
  expect(stderr).toContain("network and the gateway");
  const rows = stdout.split("\n").map((l) => l.trim().split(/\s{2,}/));
  const url = (name: string) => rows.find((r) => r[0] === name)?.[1] ?? "";
  return { server: url("network"), gateway: url("gateway (MCP)"), proc };
}

/** One call, and when (ms after `since()`) its answer came; the body as text. */
async function timed(send: () => Promise<{ body: { text(): Promise<string> } }>, since: () => number) {
  const res = await send();
  const text = await res.body.text();
  return { text, at: since() };
}

describe("roadnerd up on SIGTERM with calls held by a silent target (timeout_ms 15000)", () => {
  it.each([
    { label: "one process", mode: [] },
    { label: "--processes", mode: ["--processes"] },
  ])(
    "$label: answers E_BUSY at the grace period on the gateway and the server's port, and exits just after",
    async ({ mode }) => {
      const heldBefore = held.length;
      const { server, gateway, proc } = await up(mode);
      child = proc;
      expect(server).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      let signalled = 0;
      const since = () => performance.now() - signalled;
      // Two targets: identical calls would share one execution (the kernel's shared calls).
      const args = (path: string) => ({ url: `${target}/${path}`, timeout_ms: HELD_MS });
      const viaGateway = timed(
        () =>
          request(gateway, {
            method: "POST",
            headers: MCP_HEADERS,
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: 7,
              method: "tools/call",
              params: { name: "network__http_check", arguments: args("via-gateway") },
            }),
          }),
        since,
      );
      const direct = timed(
        () =>
          request(`${server}/actions/http_check`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(args("direct")),
          }),
        since,
      );
      // Both calls are at the target (two connections held) before the signal.
      await pollUntil(() => held.length >= heldBefore + 2, scaledMs(30_000));
      expect(held.length - heldBefore).toBeGreaterThanOrEqual(2);
      const exited = once(proc, "exit").then(([code]) => ({ code, at: since() }));
      signalled = performance.now();
      proc.kill("SIGTERM");
      const [g, d, exit] = await Promise.all([viaGateway, direct, exited]);
      // One grace period, not two in a row (before: the server's own callers at 4.03 s): the margin scales with
      // the machine's load but stays under a second grace, so two in a row still fail.
      const answerBound = SHUTDOWN_GRACE_MS + Math.min(scaledMs(1000), SHUTDOWN_GRACE_MS - 100);
      // The grace, the answers' flush and a margin: well under the held calls' 15 s (before: 13.6 s).
      const exitBound = SHUTDOWN_GRACE_MS + SHUTDOWN_FLUSH_MS + Math.min(scaledMs(2000), 6000);
      expect({ gateway: g.text.includes("E_BUSY"), direct: d.text.includes("E_BUSY") }).toEqual({
        gateway: true,
        direct: true,
      });
      expect(g.at, "the gateway's answer (ms after SIGTERM)").toBeLessThan(answerBound);
      expect(d.at, "the server's own answer (ms after SIGTERM)").toBeLessThan(answerBound);
      expect(exit.at, "the exit of up (ms after SIGTERM)").toBeLessThan(exitBound);
      expect(exit.code).toBe(0);
      child = undefined;
    },
    120_000,
  );
});
