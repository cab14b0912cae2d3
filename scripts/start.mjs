#!/usr/bin/env node
// pnpm start [server…] [up flags]: build, then run `roadnerd up` in this process (which `ps` then shows as
// "roadnerd up"). With no server named, everything is built, as `pnpm build` does: the README's client entries
// (`roadnerd mcp` over stdio) and `roadnerd call` start the servers' own bundles, so right after the README's
// first command they must be there and as new as the orchestrator's. With servers named, only what `up` runs:
// the orchestrator's bundle (every server lives inside it), plus the named servers' own with --processes.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
// Flags that take a value: their value is not a server name.
const VALUED = new Set(["--port", "--planner", "--set"]);
const servers = args.filter((a, i) => !a.startsWith("-") && !VALUED.has(args[i - 1] ?? ""));
// ROADNERD_ONLY empty: build everything.
const only =
  servers.length === 0 ? "" : args.includes("--processes") ? [...servers, "orchestrator"].join(",") : "orchestrator";
const env = { ...process.env, ROADNERD_ONLY: only };
const built = spawnSync(process.execPath, ["scripts/run-ts.mjs", "scripts/build.ts"], {
  cwd: root,
  env,
  stdio: "inherit",
});
if (built.status !== 0) process.exit(built.status ?? 1);
process.argv = [process.argv[0] ?? "node", `${root}packages/orchestrator/dist/main.js`, "up", ...args];
await import(`${root}packages/orchestrator/dist/main.js`);
