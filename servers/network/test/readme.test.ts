/**
 * The README cannot rot: every curl line in it runs against a live server, and its generated reference
 * (tools, env, JSON Schemas) must equal what the code makes today. DNS, the captive probes and every URL
 * are on loopback (helpers/loopback-world.ts); the only edit to a line is the server's real address.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { renderServerReference } from "@roadnerd/conventions";
import { type SpawnedServer, spawnServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { networkServer } from "../src/server.ts";
import { canBind53, type LoopbackWorld, startLoopbackWorld } from "./helpers/loopback-world.ts";

const run = promisify(execFile);
const README = new URL("../README.md", import.meta.url);
const DNS_IP = "127.53.13.1";
const bindable = await canBind53(DNS_IP);
if (!bindable && process.env.CI === "true") throw new Error(`CI must be able to bind ${DNS_IP}:53 (run as root)`);

const readme = await readFile(README, "utf8");
/** The root README's quick-start lines talk to this server too. */
const rootReadme = await readFile(new URL("../../../README.md", import.meta.url), "utf8");

interface Example {
  line: string;
  expectCode: string | undefined;
}

function curlExamples(markdown: string): Example[] {
  const blocks = [...markdown.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
  return blocks
    .flatMap((b) => b.split("\n"))
    .filter((l) => l.startsWith("curl "))
    .map((l) => ({ line: l, expectCode: /#\s*→\s*(E_[A-Z_]+)\s*$/.exec(l)?.[1] }));
}

const examples = curlExamples(readme);
const allExamples = [...examples, ...curlExamples(rootReadme)];

describe("servers/network/README.md", () => {
  it("has a curl example for every tool and stream", () => {
    const text = examples.map((e) => e.line).join("\n");
    for (const t of networkServer.tools) expect(text).toContain(`/actions/${t.name}`);
    for (const s of networkServer.streams) expect(text).toContain(`/sse/${s.name}`);
    expect(text).toContain("/sse/dns_resolve");
  });

  it("its generated reference is current (run `pnpm docs`)", () => {
    expect(readme).toContain(renderServerReference(networkServer));
  });
});

describe.skipIf(!bindable)("every curl line in the READMEs works as written (needs root for port 53)", () => {
  let world: LoopbackWorld;
  let server: SpawnedServer;
  let address: string;

  beforeAll(async () => {
    world = await startLoopbackWorld(DNS_IP);
    server = await spawnServer("network", { env: world.env });
    address = new URL(server.url).host;
  });
  afterAll(async () => {
    await server?.stop();
    await world?.close();
  });

  it.each(allExamples)("$line", async ({ line, expectCode }) => {
    const command = line.replaceAll("localhost:7101", address).replaceAll("127.0.0.1:7101", address);
    const { stdout } = await run("bash", ["-c", command], { timeout: 15_000 });
    if (line.includes("/sse/")) {
      expect(stdout).toContain("event: message");
      expect(stdout.trim().split("\n").at(-2)).toBe("event: end");
      expect(stdout).not.toContain("event: error");
      return;
    }
    const body = JSON.parse(stdout) as Record<string, unknown> & { error?: unknown; result?: Record<string, unknown> };
    if (expectCode) {
      expect((body.error as { code?: string } | undefined)?.code).toBe(expectCode);
      return;
    }
    // A diagnosis may carry `error: "E_…"` as a string; a failed call has an error object.
    expect(typeof body.error, stdout).not.toBe("object");
    if (line.includes("/mcp")) {
      expect(body.result).toBeDefined();
      expect(body.result?.isError).toBeFalsy();
    }
  });
});
