#!/usr/bin/env node
// Run the official MCP conformance suite (@modelcontextprotocol/conformance, needs Node >= 22) against
// every built server's /mcp. Scenarios for features these servers do not offer (resources, prompts,
// sampling, the suite's own test tools) are listed in conformance-baseline.yml; the suite fails the run if
// one of them starts passing, so the list cannot go stale.
import { spawn, spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { conformanceCli, nodeBinary, ROOT } from "./lib/tools.mjs";

const node = nodeBinary(24);
const cli = conformanceCli();
const servers = readdirSync(join(ROOT, "servers"));
let failed = 0;

for (const name of servers) {
  const entry = join(ROOT, "servers", name, "dist", "main.js");
  const child = spawn(process.execPath, [entry], {
    env: { ...process.env, HOST: "127.0.0.1", PORT: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${name} did not start`));
    }, 15_000);
    let buf = "";
    child.stdout.on("data", (d) => {
      buf += d;
      for (const line of buf.split("\n")) {
        try {
          const rec = JSON.parse(line);
          if (rec.msg === "listening") {
            clearTimeout(timer);
            resolve(rec.url);
          }
        } catch {}
      }
    });
    child.once("exit", (code) => reject(new Error(`${name} exited with ${code}`)));
  });
  child.stdout.resume();
  console.log(`conformance: ${name} at ${url}/mcp`);
  const run = spawnSync(
    node,
    [cli, "server", "--url", `${url}/mcp`, "--expected-failures", join(ROOT, "conformance-baseline.yml")],
    {
      stdio: "inherit",
      cwd: join(ROOT, ".tools"),
      timeout: 600_000,
    },
  );
  child.kill("SIGTERM");
  if (run.status !== 0) {
    console.error(`conformance: ${name} FAILED (exit ${run.status})`);
    failed += 1;
  }
}
process.exit(failed ? 1 : 0);
