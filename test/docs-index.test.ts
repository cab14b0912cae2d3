// The docs index lists every page under docs/ and the README links it (and the pages a newcomer misses most).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const read = (p: string) => readFileSync(join(root, p), "utf8");
const links = (text: string) => [...text.matchAll(/\]\(([^)#]+)(#[^)]*)?\)/g)].map((m) => m[1] ?? "");

describe("docs index", () => {
  const index = read("docs/README.md");

  it("links every page in docs/, eval's report and the decisions folder", () => {
    const pages = readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md") && f !== "README.md");
    expect(pages.length).toBeGreaterThan(3);
    for (const page of [...pages, "eval/README.md", "decisions/"]) expect(links(index)).toContain(page);
  });

  it("every link in it points at a file that exists", () => {
    for (const target of links(index)) expect(existsSync(join(root, "docs", target)), target).toBe(true);
  });

  it("the README links the index, security and reliability", () => {
    const readme = links(read("README.md"));
    for (const page of ["docs/README.md", "docs/security.md", "docs/reliability.md"]) expect(readme).toContain(page);
  });
});
