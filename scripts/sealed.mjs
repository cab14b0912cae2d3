#!/usr/bin/env node
// Run a Node script sealed in a private network namespace with only loopback up, so no test, benchmark or
// conformance run can send a packet off this machine, whatever a mistake in it asks for. The tests' own
// namespaces are still created from inside it.
//
//   node scripts/sealed.mjs <script> [args…]      (runs `<this node> <script> [args…]` sealed)
//
// As root: `unshare --net`. Without root: an unprivileged user namespace (`unshare --user --map-root-user
// --net`) when the kernel allows it; tests that need real root (network namespaces) then skip with a reason.
// Under CI=true it must be root, or it fails instead of running unsealed. ROADNERD_UNSEALED=1 runs unsealed
// (never under CI): your own risk.
import { spawnSync } from "node:child_process";
import { isSealed } from "./lib/sealed-check.mjs";

function run(command, args, env = process.env) {
  const r = spawnSync(command, args, { stdio: "inherit", env });
  if (r.error) throw r.error;
  return r.status ?? (r.signal ? 128 : 1);
}

function canUnshare(flags) {
  const r = spawnSync("unshare", [...flags, "true"], { stdio: "ignore" });
  return !r.error && r.status === 0;
}

const [script, ...args] = process.argv.slice(2);
if (!script) {
  console.error("usage: node scripts/sealed.mjs <script> [args…]");
  process.exit(2);
}
const node = process.execPath;
const ci = process.env.CI === "true";
const inner = ["sh", "-c", 'ip link set lo up && exec "$@"', "sealed", node, script, ...args];

if (isSealed()) {
  process.exit(run(node, [script, ...args], { ...process.env, ROADNERD_SEALED: "1" }));
}
if (process.getuid?.() === 0) {
  console.error("sealed: a private network namespace (unshare --net), loopback only");
  process.exit(run("unshare", ["--net", "--", ...inner], { ...process.env, ROADNERD_SEALED: "1" }));
}
if (ci) {
  console.error(
    "sealed.mjs: CI=true needs root to run sealed in a private network namespace; refusing to run unsealed",
  );
  process.exit(1);
}
if (process.env.ROADNERD_UNSEALED === "1") {
  console.error("sealed.mjs: ROADNERD_UNSEALED=1 — running NOT sealed; a mistake can reach the network");
  process.exit(run(node, [script, ...args]));
}
const userns = ["--user", "--map-root-user", "--net"];
if (canUnshare(userns)) {
  // Mapped root inside a user namespace cannot make network namespaces: those tests skip with a reason.
  const env = { ...process.env, ROADNERD_SEALED: "1", ROADNERD_NO_NETNS: "user namespace (not real root)" };
  console.error("sealed: a user and network namespace (unshare --user --net), loopback only; netns tests skip");
  process.exit(run("unshare", [...userns, "--", ...inner], env));
}
console.error(
  "sealed.mjs: cannot seal this run: not root and unprivileged user namespaces are off.\n" +
    "  run as root (sudo), enable them (sysctl kernel.unprivileged_userns_clone=1), or accept the risk with\n" +
    "  ROADNERD_UNSEALED=1",
);
process.exit(1);
