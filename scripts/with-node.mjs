#!/usr/bin/env node
// Run a script under another official Node major (from the npm registry, cached in .tools/).
// Used for the Node 24 test run. Usage: node scripts/with-node.mjs 24 <script> [args…]
import { spawnSync } from "node:child_process";
import { dirname } from "node:path";
import { nodeBinary } from "./lib/tools.mjs";

const [major, ...args] = process.argv.slice(2);
if (!/^\d+$/.test(major ?? "") || args.length === 0) {
  console.error("usage: node scripts/with-node.mjs <major> <script> [args…]");
  process.exit(2);
}
const bin = nodeBinary(major);
console.log(`with-node: ${spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout.trim()} ${args.join(" ")}`);
// Servers spawned by tests use process.execPath, so they run on this Node too.
const run = spawnSync(bin, args, {
  stdio: "inherit",
  env: { ...process.env, PATH: `${dirname(bin)}:${process.env.PATH}` },
});
process.exit(run.status ?? 1);
