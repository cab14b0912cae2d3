/**
 * Bundles take node:http by require, not through its ESM facade, whose lazy getters load Node's bundled undici
 * at every start (ADR 0043, scripts/lib/builtins-by-require.ts): built the way scripts/build.ts builds.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { BUNDLE_OPTIONS } from "../scripts/lib/bundle-options.ts";

describe("builtins by require", () => {
  it("leaves no ESM import of node:http in a bundle, and the imports still work", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rn-bundle-builtins-"));
    try {
      writeFileSync(
        join(dir, "entry.ts"),
        'import http, { STATUS_CODES, request } from "node:http";\nimport { get } from "https";\n' +
          "export const seen = [STATUS_CODES[404], typeof request, typeof http.createServer, typeof get];\n",
      );
      const out = await build({
        ...BUNDLE_OPTIONS,
        entryPoints: [join(dir, "entry.ts")],
        outdir: join(dir, "out"),
        outExtension: { ".js": ".mjs" },
      });
      expect(out.errors).toEqual([]);
      const code = readFileSync(join(dir, "out/entry.mjs"), "utf8");
      expect(code).not.toMatch(/from\s*"(node:)?https?"/);
      const mod: { seen: unknown[] } = await import(join(dir, "out/entry.mjs"));
      expect(mod.seen).toEqual(["Not Found", "function", "function", "function"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
