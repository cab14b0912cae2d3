/** Files made from code cannot rot: each committed copy equals what `pnpm generate` makes from the code today. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "@roadnerd/registry";
import { describe, expect, it } from "vitest";
import { expectedText, generatedFiles } from "../scripts/lib/generated.ts";

const files = await generatedFiles();

describe("generated files (run `pnpm generate` after changing a tool, a server or an error code)", () => {
  it("cover the error table, the README's server table, compose, the Dockerfile and every server's reference", () => {
    const paths = files.map((f) => f.path);
    for (const path of ["docs/errors.md", "README.md", "docker-compose.yml", "Dockerfile"]) {
      expect(paths).toContain(path);
    }
    expect(paths.filter((p) => p.startsWith("servers/")).length).toBeGreaterThan(0);
  });

  it.each(files.map((f) => [f.path, f] as const))("%s is current", async (path, generated) => {
    expect(readFileSync(join(REPO_ROOT, path), "utf8")).toBe(await expectedText(generated));
  });
});
