/**
 * Every curl line in the root README and in each registered server's README runs as written against a live
 * server (only its address replaced). A server whose examples need a world (DNS answers, a web page) provides
 * one in test/readme-world.ts; everything stays on loopback.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { curlExamples, runCurlExample } from "@roadnerd/conventions/testing";
import { REPO_ROOT, readRegistry, selectedServers } from "@roadnerd/registry";
import { type SpawnedServer, scaledMs, spawnServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type World, worldFor } from "./suites/lib/worlds.ts";

const servers = selectedServers();
const read = (path: string) => readFileSync(join(REPO_ROOT, path), "utf8");

const live = new Map<string, { server?: SpawnedServer; world: World | undefined }>();
/** The documented address of each server → the live one. */
const addresses: Record<string, string> = {};

beforeAll(async () => {
  for (const s of servers) {
    const world = await worldFor(s);
    // Kept before the server starts: a start that fails (no dist/) still closes its world (a holder of port 8080
    // once outlived such a run).
    const entry: { server?: SpawnedServer; world: World | undefined } = { world };
    live.set(s.name, entry);
    const server = await spawnServer(s.name, { env: world?.env ?? {} });
    entry.server = server;
    const host = new URL(server.url).host;
    addresses[`localhost:${s.defaultPort}`] = host;
    addresses[`127.0.0.1:${s.defaultPort}`] = host;
  }
});

afterAll(async () => {
  for (const { server, world } of live.values()) {
    try {
      await server?.stop();
    } finally {
      await world?.close();
    }
  }
});

// The root README addresses any server: its lines run when every server is live (no ROADNERD_ONLY narrowing).
const everyServer = servers.length === readRegistry().length;
const readmes = [...(everyServer ? ["README.md"] : []), ...servers.map((s) => `${s.dir}/README.md`)];

describe.each(readmes)("%s", (path) => {
  const examples = curlExamples(read(path));

  it("has curl examples", () => {
    expect(examples.length).toBeGreaterThan(0);
  });

  // A cold browser or a first subprocess on a busy machine: the curl's deadline scales with the machine's load.
  it.each(examples)(
    "$line",
    async (example) => {
      const verdict = await runCurlExample(example, addresses, scaledMs(15_000));
      expect(verdict.ok, `${verdict.reason}: ${verdict.stdout.slice(0, 600)}`).toBe(true);
    },
    scaledMs(15_000) + 30_000,
  );
});
