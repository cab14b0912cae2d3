/**
 * End to end through the built server and @roadnerd/client: /healthz, /actions, a tool over POST, the port watch
 * over SSE and any tool as a stream; the holder's secrets masked on every surface.
 */
import { createClient, type RoadNerdClient, type SseEvent } from "@roadnerd/client";
import { type SpawnedServer, spawnServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOLDER_CMD, type Holder, leakedSecrets, startHolder } from "./helpers/holder.ts";

let srv: SpawnedServer;
let client: RoadNerdClient;
let holder: Holder;
let port: number;

beforeAll(async () => {
  holder = await startHolder([{ proto: "tcp", host: "127.0.0.1", port: 0 }]);
  port = holder.sockets[0]?.port as number;
  srv = await spawnServer("ports");
  client = createClient(srv.url);
});

afterAll(async () => {
  await srv?.stop();
  await holder?.stop();
});

async function all(events: AsyncGenerator<SseEvent>): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of events) if (e.event !== "ping") out.push(e);
  return out;
}

describe("the built ports server", () => {
  it("answers /healthz and lists its three tools", async () => {
    expect(await client.healthz()).toMatchObject({ ok: true, name: "roadnerd-ports" });
    expect((await client.actions()).map((a) => a.tool).sort()).toEqual([
      "ports/listening_sockets",
      "ports/process_info",
      "ports/who_uses_port",
    ]);
  });

  it("streams port_watch over SSE: the current holder, masked, then end at the duration", async () => {
    // Long enough for a loaded machine's first round (every process's descriptors read) to come well inside it.
    const events = await all(client.stream("port_watch", { port, interval_ms: 100, duration_ms: 5000 }));
    expect(events.map((e) => e.event)).toEqual(["message", "end"]);
    expect(events[0]?.data).toEqual({
      change: "initial",
      listening: true,
      listeners: [{ proto: "tcp", local: `127.0.0.1:${port}`, pid: holder.pid, process: "node", cmd: HOLDER_CMD }],
      truncated: false,
      omitted: 0,
      summary: `listening: tcp 127.0.0.1:${port} by node (pid ${holder.pid})`,
    });
    expect(events[1]?.data).toEqual({ reason: "duration" });
    expect(leakedSecrets(events)).toEqual([]);
  });

  it("serves who_uses_port as a one-message stream too, masked", async () => {
    const events = await all(client.stream("who_uses_port", { port }));
    expect(events.map((e) => e.event)).toEqual(["message", "end"]);
    expect(events[0]?.data).toMatchObject({ port, in_use: true, pids: [{ pid: holder.pid, cmd: HOLDER_CMD }] });
    expect(leakedSecrets(events)).toEqual([]);
  });

  it("refuses a bad port on every surface with the same typed error", async () => {
    await expect(client.call("who_uses_port", { port: 0 })).rejects.toMatchObject({ code: "E_INVALID_INPUT" });
    await expect(all(client.stream("port_watch", { port: 65536 }))).rejects.toMatchObject({ code: "E_INVALID_INPUT" });
  });
});
