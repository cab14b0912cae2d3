#!/usr/bin/env node
// Run the suite as two vitest runs, one after the other, in the (sealed) namespace this runs in:
//   bare  — every file but *.links.test.ts: the namespace has only `lo`, and tests may say so;
//   links — the *.links.test.ts files, which add a veth end to this namespace to reach a world they built.
// Side by side, a links file's veth made a "no interface is up" triage in another file flake (ADR 0029).
//
//   node scripts/test-worlds.mjs [vitest args / file filters…]
//
// With file filters, a world none of whose files match is left out (as vitest would find nothing there);
// with other options, both run and a world with no match passes empty.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";

const root = join(import.meta.dirname, "..");
const args = process.argv.slice(2);

/** Every *.test.ts under test/, packages/*\/test, servers/*\/test (vitest's include), relative to the root. */
function testFiles() {
  const out = [];
  const walk = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name === "node_modules") continue;
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith(".test.ts")) out.push(relative(root, path));
    }
  };
  walk(join(root, "test"));
  for (const group of ["packages", "servers"]) {
    for (const pkg of readdirSync(join(root, group))) walk(join(root, group, pkg, "test"));
  }
  return out;
}

const filters = args.filter((a) => !a.startsWith("-"));
const optionsOnly = filters.length === args.length;
const files = testFiles();
const worlds = ["bare", "links"].filter((world) => {
  if (filters.length === 0 || !optionsOnly) return true;
  const mine = files.filter((f) => f.endsWith(".links.test.ts") === (world === "links"));
  // vitest matches a filter as a substring of the file's path.
  return mine.some((f) => filters.some((filter) => join(root, f).includes(filter.replace(/^\.\//, ""))));
});
// Nothing matches anywhere: let vitest say so in its own words.
if (worlds.length === 0) worlds.push("bare");

let status = 0;
for (const world of worlds) {
  console.error(`test-worlds: the ${world} world`);
  const extra = filters.length > 0 || worlds.length > 1 ? ["--passWithNoTests"] : [];
  const r = spawnSync(process.execPath, [join(root, "node_modules/vitest/vitest.mjs"), "run", ...extra, ...args], {
    stdio: "inherit",
    cwd: root,
    env: { ...process.env, ROADNERD_WORLD: world },
  });
  if (r.error) throw r.error;
  const code = r.status ?? 1;
  if (code !== 0) status = code;
}
process.exit(status);
