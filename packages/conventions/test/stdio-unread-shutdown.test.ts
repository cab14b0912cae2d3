/**
 * Regression (issue 18, attacker F7): a server's `--stdio` whose client never reads stdout ignored SIGTERM (2
 * of 3 runs at 120 calls pipelined). Its shutdown answers waited for the pipe to drain, which it never did, so
 * the process stayed. Now the answers it cannot deliver are dropped after a short flush window and it exits 0
 * within the grace period. Real: the built network server, stdout a full pipe nobody reads, 120 http_check calls
 * to a loopback target (119 answered at once, each answer ~2.6 KB as it names a long URL, so the queue passes
 * stdout's high-water mark; one held, so a shutdown answer is still to write), a real SIGTERM.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pollUntil, scaledMs, serverEntry, unreadFullPipe } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SHUTDOWN_FLUSH_MS, SHUTDOWN_GRACE_MS } from "../src/http/in-flight.ts";

const CALLS = 120;
const held: ServerResponse[] = [];
let served = 0;
let target: ReturnType<typeof createServer>;
let targetUrl: string;

beforeAll(async () => {
  target = createServer((req, res) => {
    if (!req.url?.startsWith("/fast/")) return void held.push(res);
    served += 1;
    res.end("ok");
  });
  target.listen(0, "127.0.0.1");
  await once(target, "listening");
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const res of held) res.destroy();
  target.closeAllConnections();
  await new Promise((r) => target.close(r));
});

describe("a --stdio server whose client never reads stdout", () => {
  it("exits 0 on SIGTERM within the grace period, dropping the answers it cannot deliver", async () => {
    const pipe = unreadFullPipe();
    const child: ChildProcess = spawn(process.execPath, [serverEntry("network"), "--stdio"], {
      // Room for all 120 at once, so every answer is a result (not an E_BUSY refusal, which is short).
      env: { PATH: "/usr/bin:/bin", LOG_LEVEL: "silent", MAX_CALLS: String(CALLS + 8) },
      stdio: ["pipe", pipe.fd, "ignore"],
    });
    const exited = once(child, "exit") as Promise<[number | null, string | null]>;
    try {
      const send = (m: unknown) => child.stdin?.write(`${JSON.stringify(m)}\n`);
      const init = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } };
      send({ jsonrpc: "2.0", id: 1, method: "initialize", params: init });
      send({ jsonrpc: "2.0", method: "notifications/initialized" });
      const long = "p".repeat(1900);
      for (let i = 0; i < CALLS; i++) {
        const url = i === 0 ? `${targetUrl}/held` : `${targetUrl}/fast/${i}/${long}`;
        const args = { url, timeout_ms: 15_000 };
        send({ jsonrpc: "2.0", id: 100 + i, method: "tools/call", params: { name: "http_check", arguments: args } });
      }
      expect(await pollUntil(() => held.length > 0 && served === CALLS - 1, 30_000)).toBe(true);
      await new Promise((r) => setTimeout(r, 200)); // the last answers queued behind the full pipe
      const stoppedAt = performance.now();
      child.kill("SIGTERM");
      // The grace period, the flush window and a start-up's worth of slack, stretched with the machine's load.
      const deadline = scaledMs(SHUTDOWN_GRACE_MS + SHUTDOWN_FLUSH_MS + 2_000);
      const outcome = await Promise.race([exited, new Promise((r) => setTimeout(() => r("still running"), deadline))]);
      // Before: still running (the E_BUSY answers waited for a reader that never came).
      expect(outcome).toEqual([0, null]);
      expect(performance.now() - stoppedAt).toBeGreaterThanOrEqual(SHUTDOWN_GRACE_MS - 100);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      pipe.close();
    }
  }, 60_000);
});
