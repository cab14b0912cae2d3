/**
 * The MCP client configs the README shows (generated from scripts/lib/client-configs.ts), taken from the
 * README as a person copies them: this checkout's path put where they say /path/to/roadnerd-mcp, each stdio
 * entry started exactly as written (command and args, from another directory, with a desktop app's small
 * environment) and spoken to with the SDK's client: initialize, tools/list, then one tools/call. Needs `pnpm build`
 * first (test/first-command.test.ts runs them in a copy right after the README's first command instead).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT, readRegistry } from "@roadnerd/registry";
import { scaledMs } from "@roadnerd/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { CHECKOUT, GATEWAY_URL } from "../scripts/lib/client-configs.ts";
import { readmeClientConfigs, readmeStdioEntries, runEntry } from "./lib/readme-clients.ts";

const configs = readmeClientConfigs();
const stdio = readmeStdioEntries();

const cwd = mkdtempSync(join(tmpdir(), "rn-client-"));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** What a desktop app gives the command it starts: its PATH and HOME, not the checkout's shell. */
const appEnv = () => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: cwd, XDG_STATE_HOME: join(cwd, "state") });

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
    "%s: %s starts as written, lists its tools and answers a call",
    async (_client, name, entry) => {
      const { server, tools, called, result } = await runEntry(entry, REPO_ROOT, cwd, { env: appEnv() });
      expect(server).toBeTruthy();
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
      expect(result.structuredContent, called).toHaveProperty("routes");
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
