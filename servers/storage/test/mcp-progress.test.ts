/**
 * top_consumers' progress as an MCP client sees it (the official SDK client, the built server, over Streamable
 * HTTP and stdio): with a progressToken (the client's `onprogress`), notifications/progress with an increasing
 * `progress` and the walk's counts arrive before the result; without one, none.
 */
import { join } from "node:path";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { openMcp } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScratchMounts, scratchMounts } from "./helpers/scratch-mounts.ts";
import { manyFiles } from "./helpers/trees.ts";

let m: ScratchMounts;
let root: string;
let many: string;

beforeAll(() => {
  m = scratchMounts("rn-storage-mcp-progress-");
  root = m.tmpfs(join(m.base, "root"), "size=64m,mode=755");
  many = join(root, "many");
  // Far more than one 8 ms slice of the walk, on any machine: the walk reports right after its first slice.
  manyFiles(many, 50, 1000);
});

afterAll(() => m?.cleanup());

describe.each(["http", "stdio"] as const)("top_consumers progress over MCP %s", (transport) => {
  it("with a progressToken: increasing progress before the result; without: none", async () => {
    const mcp = await openMcp(transport, "storage", { env: { STORAGE_ROOTS: root } });
    const errors: Error[] = [];
    // A notification after the result (or one with a token the client did not send) is reported here.
    mcp.client.onerror = (e) => errors.push(e);
    try {
      const seen: Array<Progress | "result"> = [];
      const args = { path: many, n: 3, timeout_ms: 15_000 };
      const result = await mcp.client.callTool({ name: "top_consumers", arguments: args }, undefined, {
        onprogress: (p) => seen.push(p),
      });
      seen.push("result");
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ path: many, truncated: false, scanned: { files: 50_000 } });
      const progress = seen.filter((p): p is Progress => p !== "result");
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect(seen.at(-1)).toBe("result");
      const values = progress.map((p) => p.progress);
      for (let i = 1; i < values.length; i++) expect(values[i]).toBeGreaterThan(values[i - 1] as number);
      // The walk's counts as the message: what /sse/top_consumers sends as its progress events.
      for (const p of progress) expect(p.message).toMatch(/^dirs \d+, files \d+, bytes \d+$/);
      const files = progress.map((p) => Number(/files (\d+)/.exec(p.message ?? "")?.[1]));
      expect([...files].sort((a, b) => a - b)).toEqual(files);

      const plain = await mcp.client.callTool({ name: "top_consumers", arguments: args });
      expect(plain.structuredContent).toMatchObject({ path: many, truncated: false });
      expect(errors.map((e) => e.message)).toEqual([]);
    } finally {
      await mcp.close();
    }
  });
});
