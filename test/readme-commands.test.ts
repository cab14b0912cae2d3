// The README's two fresh-machine commands and CI must agree, so the README never lies.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const root = new URL("../", import.meta.url);
const read = (p: string) => readFileSync(new URL(p, root), "utf8");

describe("README first commands", () => {
  const readme = read("README.md");
  const firstBlock = /```bash\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  const commands = firstBlock
    .split("\n")
    .map((l) => l.replace(/#.*$/, "").trim())
    .filter(Boolean);

  it("gives exactly two commands near the top: install+run and install+test", () => {
    // Near the top as rendered: the comments naming lines not run (test/readme-blocks.test.ts) are not shown.
    expect(readme.replace(/<!--[^\n]*-->\n/g, "").indexOf(firstBlock)).toBeLessThan(400);
    expect(commands).toEqual(["bash scripts/setup.sh && pnpm start", "bash scripts/setup.sh --tests && pnpm test"]);
  });

  it("CI runs the same setup and the same test command", () => {
    const ci = read(".ci/run");
    // Each CI stage is `stage <name> <command>`.
    const lines = ci.split("\n").map((l) => l.trim().replace(/^stage \S+ /, ""));
    expect(lines).toContain("bash scripts/setup.sh --tests");
    expect(lines.some((l) => /^pnpm test( |$)/.test(l))).toBe(true);
  });

  it("the scripts the commands name exist", () => {
    const scripts = JSON.parse(read("package.json")).scripts as Record<string, string>;
    expect(scripts.start).toBeDefined();
    expect(scripts.test).toMatch(/scripts\/sealed\.mjs scripts\/test-worlds\.mjs$/);
    // test-worlds runs vitest (both worlds) with whatever file filters follow `pnpm test`.
    expect(read("scripts/test-worlds.mjs")).toContain('"node_modules/vitest/vitest.mjs"), "run"');
  });
});
