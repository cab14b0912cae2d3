/**
 * The skeleton `pnpm new-server <name>` writes: a server that already builds, lints, passes the suite and
 * answers on every surface from its bin, with one example tool (uptime, read from /proc: no binary needed)
 * to replace with its real tools.
 */

export interface SkeletonOptions {
  name: string;
  port: number;
  summary: string;
  title: string;
  version: string;
}

export type SkeletonFiles = Record<string, string>;

/** A-Z title from a server name: dns-config → DnsConfig. */
export function titleOf(name: string): string {
  return name.replace(/(^|-)([a-z0-9])/g, (_, _dash: string, c: string) => c.toUpperCase());
}

/** Every server's bin (bin/roadnerd-<name>.mjs): pnpm links it at install time, before dist/ exists. */
export const BIN_LAUNCHER = `#!/usr/bin/env node
// The file pnpm links as this server's bin at install time, before anything is built; the server itself is
// the esbuild bundle in dist/ (pnpm build).
import { existsSync } from "node:fs";

const server = new URL("../dist/main.js", import.meta.url);
if (!existsSync(server)) {
  process.stderr.write("this server is not built yet: run \`pnpm build\` in the repository first\\n");
  process.exit(2);
}
await import(server.href);
`;

export function renderSkeleton(o: SkeletonOptions): SkeletonFiles {
  const bin = `roadnerd-${o.name}`;
  const pkg = {
    name: `@roadnerd/${o.name}`,
    version: o.version,
    private: true,
    description: o.summary,
    type: "module",
    bin: { [bin]: `./bin/${bin}.mjs` },
    exports: { "./server": "./src/server.ts", "./tools/*": "./src/tools/*.ts" },
    roadnerd: { port: o.port, title: o.title },
    dependencies: { "@roadnerd/conventions": "workspace:*", zod: "catalog:" },
  };
  return {
    "package.json": `${JSON.stringify(pkg, null, 2)}\n`,
    [`bin/${bin}.mjs`]: BIN_LAUNCHER,
    "src/main.ts": `/** ${bin}: HTTP+SSE and MCP on HOST:PORT, or MCP over stdio with --stdio. */
import { runMain } from "@roadnerd/conventions";
import { server } from "./server.ts";

// Not awaited at the top: the build bundles this as CommonJS (ADR 0062).
void runMain(server);
`,
    "src/kit.ts": `/** ${o.title}'s typed kit: add this server's env vars here; handlers see them typed on ctx.config. */
import { createKit } from "@roadnerd/conventions";

export const { defineTool, defineStream, defineServer } = createKit({ env: {} });
`,
    "src/server.ts": `/** ${o.title}: the list of tools and streams (by hand: the list is the table of contents). */
import pkg from "../package.json" with { type: "json" };
import { defineServer } from "./kit.ts";
import { uptime } from "./tools/uptime.ts";

export const server = defineServer({
  package: pkg,
  instructions: "${o.summary.replaceAll('"', '\\"')}",
  tools: [uptime],
  streams: [],
});
`,
    "src/tools/uptime.ts": `/** uptime: how long the machine has been up and its load, from /proc (an example tool: replace it). */
import { readFile } from "node:fs/promises";
import { DiagError } from "@roadnerd/conventions";
import { z } from "zod";
import { defineTool } from "../kit.ts";

async function readProc(path: string, signal: AbortSignal): Promise<string> {
  try {
    return await readFile(path, { encoding: "utf8", signal });
  } catch (err) {
    throw new DiagError("E_UNSUPPORTED", \`cannot read \${path}: \${(err as Error).message}\`, { cause: err });
  }
}

export const uptime = defineTool({
  name: "uptime",
  summary: "How long this machine has been up, and its load average.",
  input: {},
  output: {
    uptime_s: z.number().int().min(0).describe("seconds since boot"),
    load: z.array(z.number().min(0)).length(3).describe("load average over 1, 5 and 15 minutes"),
  },
  example: {},
  view: (r) => ({ load_1m: r.load[0] }),
  summarize: (r) => \`up \${Math.floor(r.uptime_s / 3600)} h, load \${r.load.join(" ")}\`,
  async handler(_input, ctx) {
    const [up, loadavg] = await Promise.all([
      readProc("/proc/uptime", ctx.signal),
      readProc("/proc/loadavg", ctx.signal),
    ]);
    const seconds = Number(up.split(" ")[0]);
    const load = loadavg.split(" ").slice(0, 3).map(Number);
    if (!Number.isFinite(seconds) || load.some((n) => !Number.isFinite(n))) {
      throw new DiagError("E_INTERNAL", "could not parse /proc/uptime or /proc/loadavg");
    }
    return { uptime_s: Math.floor(seconds), load };
  },
});
`,
    "test/tools/uptime.test.ts": `import { readFileSync } from "node:fs";
import { callTool } from "@roadnerd/conventions/testing";
import { describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";
import { uptime } from "../../src/tools/uptime.ts";

describe("uptime", () => {
  it("reports the machine's real uptime and load", async () => {
    const before = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
    const r = await callTool(server, uptime, {});
    const after = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
    expect(r.uptime_s).toBeGreaterThanOrEqual(Math.floor(before));
    expect(r.uptime_s).toBeLessThanOrEqual(Math.ceil(after));
    expect(r.load).toHaveLength(3);
    expect(r.summary).toMatch(/^up \\d+ h, load /);
  });

  it("refuses unknown input keys with the valid ones", async () => {
    await expect(callTool(server, uptime, { verbose: true })).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
      message: expect.stringContaining("valid keys"),
    });
  });
});
`,
    "README.md": `# ${o.title} (\`${bin}\`)

${o.summary}

\`\`\`bash
pnpm build && node servers/${o.name}/dist/main.js     # http://127.0.0.1:${o.port}  (PORT=0: any free port)
node servers/${o.name}/dist/main.js --stdio           # MCP over stdio
\`\`\`

## Every tool with curl

Each line below is run by the root suite (\`test/server-readmes.test.ts\`) against a live server, so they work
as written. Every tool also takes \`timeout_ms\` and \`run_id\`; every result has a one-line \`summary\`.

\`\`\`bash
curl -s localhost:${o.port}/healthz
curl -s localhost:${o.port}/actions
curl -s -X POST localhost:${o.port}/actions/uptime
curl -sN 'localhost:${o.port}/sse/uptime'
\`\`\`

## Reference

<!-- generated:start -->
<!-- generated:end -->
`,
  };
}
