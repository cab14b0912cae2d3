/**
 * `roadnerd mcp` over stdio to a client that never answers pings (raw JSON lines, no SDK). After a call's
 * progress the gateway pings once to let the client settle its notifications; a client that ignores it gets
 * its result after the bound, and never a notifications/cancelled for that ping; the next call is not held
 * for another ping; at EOF the process exits.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "@roadnerd/registry";
import { scaledMs } from "@roadnerd/testkit";
import { afterAll, expect, it } from "vitest";

const BIN = join(REPO_ROOT, "packages/orchestrator/dist/main.js");
const dir = mkdtempSync(join(tmpdir(), "rn-silent-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Message {
  id?: number | string;
  method?: string;
  params?: { progressToken?: string };
  result?: { isError?: boolean };
  error?: unknown;
}

it("a client that ignores pings: results, one ping in all, no notifications/cancelled, exit at EOF", async () => {
  const child = spawn(process.execPath, [BIN, "mcp"], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      ROADNERD_LOG_DIR: dir,
      ROADNERD_ATTACH_TIMEOUT_MS: String(Math.min(120_000, scaledMs(30_000))),
    },
    stdio: ["pipe", "pipe", "ignore"],
  });
  const seen: Message[] = [];
  let buffered = "";
  child.stdout.on("data", (d: Buffer) => {
    buffered += d.toString();
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) if (line.trim()) seen.push(JSON.parse(line) as Message);
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
  const answerTo = async (id: number) => {
    const deadline = Date.now() + scaledMs(60_000);
    while (!seen.some((m) => m.id === id && !m.method) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    return seen.findIndex((m) => m.id === id && !m.method);
  };
  const call = (id: number) =>
    send({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: {
        name: "triage",
        arguments: { symptom: "port 8080 already in use" },
        _meta: { progressToken: `t${id}` },
      },
    });

  send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "silent", version: "1" } },
  });
  expect(await answerTo(1)).toBeGreaterThanOrEqual(0);
  send({ jsonrpc: "2.0", method: "notifications/initialized" });

  call(2);
  const first = await answerTo(2);
  expect(first, JSON.stringify(seen)).toBeGreaterThan(0);
  call(3);
  const second = await answerTo(3);
  expect(second, JSON.stringify(seen)).toBeGreaterThan(first);
  child.stdin.end();
  expect(await Promise.race([exited, new Promise((r) => setTimeout(() => r("still running"), scaledMs(20_000)))])).toBe(
    0,
  );

  const progressOf = (token: string) =>
    seen.flatMap((m, i) => (m.method === "notifications/progress" && m.params?.progressToken === token ? [i] : []));
  for (const [token, at] of [
    ["t2", first],
    ["t3", second],
  ] as const) {
    expect(progressOf(token).length, token).toBeGreaterThan(0);
    expect(Math.max(...progressOf(token)), token).toBeLessThan(at);
    expect(seen[at]?.result?.isError, JSON.stringify(seen[at])).toBeFalsy();
  }
  const pings = seen.flatMap((m, i) => (m.method === "ping" ? [i] : []));
  // The first call's ping went unanswered; the second call's result did not wait on another.
  expect(pings.length, JSON.stringify(seen.map((m) => m.method ?? m.id))).toBe(1);
  expect(pings[0]).toBeLessThan(first);
  expect(seen.filter((m) => m.method === "notifications/cancelled")).toEqual([]);
}, 180_000);
