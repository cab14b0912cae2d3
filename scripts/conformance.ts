// pnpm conformance: the official MCP conformance suite (@modelcontextprotocol/conformance, Node >= 22) against
// every registered server's /mcp, sealed in a private network namespace (scripts/sealed.mjs; the tools are
// fetched before). Scenarios for features these servers do not offer (resources, prompts, sampling, the
// suite's own test tools) are listed in conformance-baseline.yml; the suite fails the run if one of them
// starts passing, so the list cannot go stale.
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { REPO_ROOT, readRegistry } from "@roadnerd/registry";
// @ts-expect-error plain .mjs helper
import { conformanceCli, nodeBinary } from "./lib/tools.mjs";

const node: string = nodeBinary(24);
const cli: string = conformanceCli();
let failed = 0;

function startServer(entry: string): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [entry], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOST: "127.0.0.1", PORT: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${entry} did not start`));
    }, 15_000);
    let buf = "";
    child.stdout.on("data", (d: Buffer) => {
      buf += d.toString();
      for (const line of buf.split("\n")) {
        if (!line.includes('"listening"')) continue;
        clearTimeout(timer);
        child.stdout.removeAllListeners("data");
        child.stdout.resume();
        resolve({ url: (JSON.parse(line) as { url: string }).url, stop: () => child.kill("SIGTERM") });
        return;
      }
    });
    child.once("exit", (code) => reject(new Error(`${entry} exited with ${code}`)));
  });
}

for (const server of readRegistry()) {
  const { url, stop } = await startServer(join(REPO_ROOT, server.entry));
  console.log(`conformance: ${server.name} at ${url}/mcp`);
  const run = spawnSync(
    node,
    [cli, "server", "--url", `${url}/mcp`, "--expected-failures", join(REPO_ROOT, "conformance-baseline.yml")],
    { stdio: "inherit", cwd: join(REPO_ROOT, ".tools"), timeout: 600_000 },
  );
  stop();
  if (run.status !== 0) {
    console.error(`conformance: ${server.name} FAILED (exit ${run.status})`);
    failed += 1;
  }
}
process.exit(failed ? 1 : 0);
