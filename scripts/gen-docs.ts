// Regenerate the parts of the docs that come from code: docs/errors.md's table and each server README's
// tool catalog and JSON Schemas (between <!-- generated:start --> and <!-- generated:end -->).
// `pnpm docs` writes them; the docs tests fail when a committed file differs from what this makes.
import { readFile, writeFile } from "node:fs/promises";
import { renderErrorTable } from "../packages/conventions/src/error-table.ts";
import { renderServerReference } from "../packages/conventions/src/server-docs.ts";
import { networkServer } from "../servers/network/src/server.ts";

// Bundled into .tools/run/ before it runs, so find the repo from the working directory (the root).
const root = new URL(`file://${process.cwd()}/`);
const START = "<!-- generated:start -->";
const END = "<!-- generated:end -->";

export function replaceGenerated(doc: string, generated: string): string {
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error("markers missing");
  return `${doc.slice(0, a + START.length)}\n${generated}\n${doc.slice(b)}`;
}

const targets: Array<[string, string]> = [
  ["docs/errors.md", renderErrorTable()],
  ["servers/network/README.md", renderServerReference(networkServer)],
];
for (const [path, generated] of targets) {
  const url = new URL(path, root);
  const before = await readFile(url, "utf8");
  const after = replaceGenerated(before, generated);
  if (after !== before) {
    await writeFile(url, after);
    console.log(`updated ${path}`);
  } else {
    console.log(`${path} is current`);
  }
}
