/**
 * The skeleton `pnpm new-server` writes keeps up with the kernel: rendered into a scratch folder inside the
 * workspace (so its imports resolve), it typechecks, lints, bundles, and its example tool answers through the
 * kernel, over HTTP and over MCP. (The generator's whole run — files, install, generate, then build, bin, lint
 * and tests — is test/docs-commands.test.ts, in a copy of the repository, from docs/adding-a-server.md.)
 */
import { execFile } from "node:child_process";
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { parseServerPackage } from "@roadnerd/conventions/internal";
import { callTool, testApp } from "@roadnerd/conventions/testing";
import { REPO_ROOT } from "@roadnerd/registry";
import { scaledMs } from "@roadnerd/testkit";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderSkeleton } from "../scripts/lib/skeleton.ts";

const run = promisify(execFile);
const scratch = join(REPO_ROOT, ".tools", `skeleton-${process.pid}`);
const dir = join(scratch, "servers", "skeleton-check");
const files = renderSkeleton({
  name: "skeleton-check",
  port: 7199,
  title: "SkeletonCheck",
  summary: "A server made by the generator, checked by the suite.",
  version: "0.1.0",
});

beforeAll(async () => {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  // The skeleton's dependencies, as pnpm would link them.
  await symlink(join(REPO_ROOT, "servers/network/node_modules"), join(dir, "node_modules"));
  await writeFile(
    join(scratch, "tsconfig.json"),
    JSON.stringify({ extends: join(REPO_ROOT, "tsconfig.base.json"), include: ["servers/*/src", "servers/*/test"] }),
  );
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe("the new-server skeleton", () => {
  it("declares a complete server package", () => {
    const identity = parseServerPackage(JSON.parse(files["package.json"] ?? "{}"));
    expect(identity).toMatchObject({ name: "skeleton-check", bin: "roadnerd-skeleton-check", defaultPort: 7199 });
  });

  it(
    "typechecks, lints and bundles",
    async () => {
      await run(join(REPO_ROOT, "node_modules/.bin/tsc"), ["-p", join(scratch, "tsconfig.json"), "--noEmit"]);
      await run(join(REPO_ROOT, "node_modules/.bin/biome"), ["check", "--vcs-enabled=false", dir], { cwd: REPO_ROOT });
      const out = await build({
        entryPoints: [join(dir, "src/main.ts")],
        bundle: true,
        platform: "node",
        format: "esm",
        write: false,
        logLevel: "silent",
      });
      expect(out.errors).toEqual([]);
    },
    scaledMs(60_000),
  );

  it("its example tool answers through the kernel, over HTTP and over MCP", async () => {
    const { server } = (await import(`${dir}/src/server.ts`)) as typeof import("../servers/network/src/server.ts");
    const tool = server.tools[0];
    if (!tool) throw new Error("no tool");
    expect((await callTool(server, tool, {})).summary).toMatch(/^up \d+ h, load /);
    const app = await testApp(server);
    try {
      expect((await app.inject({ url: "/healthz" })).json()).toMatchObject({ name: "roadnerd-skeleton-check" });
      expect((await app.inject({ method: "POST", url: "/actions/uptime" })).json()).toHaveProperty("uptime_s");
      const mcp = await app.inject({
        method: "POST",
        url: "/mcp",
        headers: { accept: "application/json, text/event-stream", "content-type": "application/json" },
        payload: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "uptime", arguments: {} } },
      });
      expect(mcp.json().result.structuredContent).toHaveProperty("load");
    } finally {
      await app.close();
    }
  });
});
