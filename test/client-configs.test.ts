/**
 * The MCP client configs the README shows (generated from scripts/lib/client-configs.ts), taken from the
 * README as a person copies them: this checkout's path put where they say /path/to/roadnerd-mcp, each stdio
 * entry started exactly as written (command and args, from another directory, with a desktop app's small
 * environment) and spoken to with the SDK's client: initialize, then tools/list. Needs `pnpm build` first.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { REPO_ROOT, readRegistry } from "@roadnerd/registry";
import { scaledMs } from "@roadnerd/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { CHECKOUT, GATEWAY_URL } from "../scripts/lib/client-configs.ts";
import { CLIENTS_END, CLIENTS_START } from "../scripts/lib/generated.ts";
import { readRootReadme } from "./lib/readme-blocks.ts";

interface Entry {
  type?: string;
  command?: string;
  args?: string[];
  url?: string;
}

const readme = readRootReadme();
const section = readme.slice(readme.indexOf(CLIENTS_START), readme.indexOf(CLIENTS_END));
/** Each client's config as the README shows it: its name and the entries it holds. */
const configs = [...section.matchAll(/^(.+?) — `[^`]+`:\n\n```json\n([\s\S]*?)```/gm)].map((m) => {
  const json = JSON.parse(m[2] ?? "{}") as { mcpServers?: Record<string, Entry>; servers?: Record<string, Entry> };
  return { client: m[1] ?? "", entries: Object.entries(json.mcpServers ?? json.servers ?? {}) };
});
const stdio = configs.flatMap((c) =>
  c.entries.filter(([, e]) => e.command).map(([name, e]) => ({ client: c.client, name, entry: e })),
);

const cwd = mkdtempSync(join(tmpdir(), "rn-client-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** What a desktop app gives the command it starts: its PATH and HOME, not the checkout's shell. */
const appEnv = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd, XDG_STATE_HOME: join(cwd, "state") });

async function listTools(entry: Entry): Promise<string[]> {
  const args = (entry.args ?? []).map((a) => a.replaceAll(CHECKOUT, REPO_ROOT));
  const client = new Client({ name: "client-configs-test", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({ command: entry.command ?? "", args, cwd, env: appEnv(), stderr: "ignore" }),
  );
  try {
    expect(client.getServerVersion()?.name).toBeTruthy();
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

describe("README client configs", () => {
  it("Claude Desktop, VS Code and Cursor each have a stdio entry; the HTTP one names the gateway", () => {
    expect(configs.map((c) => c.client.split(" —")[0])).toEqual(
      expect.arrayContaining(["Claude Desktop", "VS Code", "Cursor"]),
    );
    for (const client of ["Claude Desktop", "VS Code", "Cursor"]) {
      expect(stdio.some((s) => s.client === client)).toBe(true);
    }
    const http = configs.flatMap((c) => c.entries.filter(([, e]) => e.url).map(([, e]) => e.url));
    expect(http).toEqual([GATEWAY_URL]);
  });

  it("every stdio entry runs node on an absolute path of the checkout, nothing unpublished", () => {
    for (const { entry } of stdio) {
      expect(entry.command).toBe("node");
      expect(entry.args?.[0]).toMatch(new RegExp(`^${CHECKOUT}/.+/dist/main\\.js$`));
      expect(JSON.stringify(entry)).not.toContain("npx");
    }
  });

  it.each(stdio.map((s) => [s.client, s.name, s.entry] as const))(
    "%s: %s starts as written and lists its tools",
    async (_client, name, entry) => {
      const tools = await listTools(entry);
      if (entry.args?.includes("mcp")) {
        expect(tools).toContain("triage");
        for (const s of readRegistry())
          expect(
            tools.some((t) => t.startsWith(`${s.name}__`)),
            s.name,
          ).toBe(true);
      } else {
        expect(name).toBe("roadnerd-network");
        expect(tools).toContain("route_info");
      }
    },
    scaledMs(60_000),
  );
});
