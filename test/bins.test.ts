// The bins from the repository root after `pnpm build`: `pnpm exec roadnerd` and `pnpm exec roadnerd-<server>`
// for every registered server (the root package.json depends on each, written by pnpm generate), as the README
// says. The packed tarballs' `npx roadnerd-<server>` is in packages.test.ts.
import { execFile } from "node:child_process";
import { stripVTControlCharacters } from "node:util";
import { REPO_ROOT, readRegistry } from "@roadnerd/registry";
import { describe, expect, it } from "vitest";

function pnpmExec(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile("pnpm", ["exec", ...args], { cwd: REPO_ROOT, timeout: 120_000 }, (err, stdout, stderr) => {
      // pnpm's own notices (" WARN  Unsupported engine" on a Node newer than `engines`) are not the bin's output.
      // (pnpm pads the label with thin spaces, U+2009, which \s matches.)
      const bin = stripVTControlCharacters(stdout).replace(/^\s*WARN\s.*\n/gm, "");
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout: bin, stderr });
    });
  });
}

describe("bins at the repository root", () => {
  it("pnpm exec roadnerd --version", async () => {
    expect(await pnpmExec(["roadnerd", "--version"])).toMatchObject({ code: 0, stdout: "roadnerd 0.1.0\n" });
  });

  it.each(readRegistry().map((s) => [s.name]))("pnpm exec roadnerd-%s --help: its usage, exit 0", async (name) => {
    const r = await pnpmExec([`roadnerd-${name}`, "--help"]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toContain(`usage: roadnerd-${name} [--stdio]`);
  });
});
