// pnpm conformance: the official MCP conformance suite (@modelcontextprotocol/conformance, Node >= 22) against
// every registered server's /mcp, sealed in a private network namespace (scripts/sealed.mjs; the tools are
// fetched before). Scenarios for features these servers do not offer (resources, prompts, sampling, the
// suite's own test tools) are listed in conformance-baseline.yml; the suite fails the run if one of them
// starts passing, so the list cannot go stale.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { REPO_ROOT, selectedServers } from "@roadnerd/registry";
import { spawnServer } from "@roadnerd/testkit";
// @ts-expect-error plain .mjs helper
import { conformanceCli, nodeBinary } from "./lib/tools.mjs";

const node: string = nodeBinary(24);
const cli: string = conformanceCli();
let failed = 0;

for (const server of selectedServers()) {
  // warn: the suite runs synchronously, so nothing drains the server's stdout meanwhile; keep it quiet.
  const { url, stop } = await spawnServer(server.name, { env: { LOG_LEVEL: "warn" } });
  console.log(`conformance: ${server.name} at ${url}/mcp`);
  const run = spawnSync(
    node,
    [cli, "server", "--url", `${url}/mcp`, "--expected-failures", join(REPO_ROOT, "conformance-baseline.yml")],
    { stdio: "inherit", cwd: join(REPO_ROOT, ".tools"), timeout: 600_000 },
  );
  await stop();
  if (run.status !== 0) {
    console.error(`conformance: ${server.name} FAILED (exit ${run.status})`);
    failed += 1;
  }
}
process.exit(failed ? 1 : 0);
