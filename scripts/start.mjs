#!/usr/bin/env node
// pnpm start [server…] [up flags]: build only what `roadnerd up` will run, then run it in this process.
// By default every server lives inside the orchestrator's bundle, so only that is built; with --processes
// the named servers' own bundles (all, when none is named) are built too.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
// Flags that take a value: their value is not a server name.
const VALUED = new Set(["--port", "--planner", "--set"]);
const servers = args.filter((a, i) => !a.startsWith("-") && !VALUED.has(args[i - 1] ?? ""));
// ROADNERD_ONLY empty: build everything.
const only = !args.includes("--processes")
  ? "orchestrator"
  : servers.length
    ? [...servers, "orchestrator"].join(",")
    : "";
const env = { ...process.env, ROADNERD_ONLY: only };
const built = spawnSync(process.execPath, ["scripts/run-ts.mjs", "scripts/build.ts"], {
  cwd: root,
  env,
  stdio: "inherit",
});
if (built.status !== 0) process.exit(built.status ?? 1);
process.argv = [process.argv[0] ?? "node", `${root}packages/orchestrator/dist/main.js`, "up", ...args];
await import(`${root}packages/orchestrator/dist/main.js`);
