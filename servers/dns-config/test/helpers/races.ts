/** What the dns-config race tests share: a process swapping a directory for a symlink, a socket left over. */
import { type ChildProcess, spawn } from "node:child_process";

/** The racer's own bound: it stops by itself even if the test dies. */
const SWAPS = 1_000_000;

// Renames are atomic: `<name>` is the root's real directory (`<name>.real`) or a symlink out (`<name>.link`),
// never missing for long.
const RACER = `
const { renameSync } = require("node:fs");
const [dir, name, max] = process.argv.slice(1);
const mv = (a, b) => { try { renameSync(dir + "/" + a, dir + "/" + b); } catch {} };
process.stdout.write("swapping\\n");
for (let n = 0; n < Number(max); n++) { mv(name + ".real", name); mv(name, name + ".real"); mv(name + ".link", name); mv(name, name + ".link"); }`;

/** A process swapping `<dir>/<name>` between `<name>.real` and `<name>.link`: resolves once it swaps. */
export function startSwapRacer(dir: string, name: string): Promise<ChildProcess> {
  const racer = spawn(process.execPath, ["-e", RACER, dir, name, String(SWAPS)], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  // The walks start once it swaps (a loaded machine starts a process slowly).
  return new Promise((resolve, reject) => {
    racer.stdout?.once("data", () => resolve(racer));
    racer.once("exit", () => reject(new Error("the racer exited before swapping")));
  });
}

/** A socket file nobody listens on: its listener killed with SIGKILL, as a crashed daemon leaves it. */
export async function leftoverSocket(path: string): Promise<void> {
  const child = spawn(process.execPath, [
    "-e",
    `require("net").createServer().listen(${JSON.stringify(path)}, () => console.log("up"))`,
  ]);
  await new Promise<void>((ok) => child.stdout?.once("data", () => ok()));
  const exited = new Promise<void>((ok) => child.once("exit", () => ok()));
  child.kill("SIGKILL");
  await exited;
}
