// pnpm start [name…]: run every registered server (or the named ones) from its build, each on its own
// default port (HOST applies to all; PORT only when exactly one server is named). Logs are the servers' own
// JSON lines. Ctrl-C or SIGTERM stops them all; if one exits, or pnpm above us goes away, the others stop too.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { REPO_ROOT, readRegistry } from "@roadnerd/registry";

const registry = readRegistry();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((n) => !registry.some((s) => s.name === n));
if (unknown.length) {
  console.error(`unknown server: ${unknown.join(", ")} (known: ${registry.map((s) => s.name).join(", ")})`);
  process.exit(2);
}
const servers = wanted.length ? registry.filter((s) => wanted.includes(s.name)) : registry;
const env = { ...process.env };
// One PORT serves one server: it applies only when exactly one is named, and says so when it is ignored.
if (env.PORT !== undefined && wanted.length !== 1) {
  console.error(`PORT=${env.PORT} ignored: it applies when one server is named (pnpm start <name>)`);
  delete env.PORT;
}

const children = new Map<ChildProcess, string>();
let stopping = false;
let exitCode = 0;

function stopAll(signal: NodeJS.Signals): void {
  if (stopping) return;
  stopping = true;
  for (const child of children.keys()) child.kill(signal);
}

for (const s of servers) {
  const child = spawn(process.execPath, [join(REPO_ROOT, s.entry)], { env, stdio: ["ignore", "inherit", "inherit"] });
  children.set(child, s.name);
  child.once("exit", (code, signal) => {
    children.delete(child);
    if (!stopping) {
      console.error(`${s.name} exited (${signal ?? `code ${code}`}); stopping the others`);
      exitCode = code || 1;
      stopAll("SIGTERM");
    }
    if (children.size === 0) process.exit(exitCode);
  });
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => stopAll("SIGTERM"));
// pnpm does not pass a SIGTERM on to us: if it goes away, so do the servers, instead of holding their ports.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stopAll("SIGTERM");
}, 1000).unref();
