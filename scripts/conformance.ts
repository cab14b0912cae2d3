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

/** The suite's own last tally, `Total: 7 passed, 23 failed` (colours stripped), or undefined. */
function tallyOf(output: string): { passed: number; failed: number } | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes
  const m = /Total:\s*(\d+) passed,\s*(\d+) failed/.exec(output.replace(/\x1b\[[0-9;]*m/g, ""));
  return m ? { passed: Number(m[1]), failed: Number(m[2]) } : undefined;
}

for (const server of selectedServers()) {
  // warn: the suite runs synchronously, so nothing drains the server's stdout meanwhile; keep it quiet.
  const { url, stop } = await spawnServer(server.name, { env: { LOG_LEVEL: "warn" } });
  const run = spawnSync(
    node,
    [cli, "server", "--url", `${url}/mcp`, "--expected-failures", join(REPO_ROOT, "conformance-baseline.yml")],
    { encoding: "utf8", cwd: join(REPO_ROOT, ".tools"), timeout: 600_000, maxBuffer: 64 * 1024 * 1024 },
  );
  await stop();
  const output = `${run.stdout ?? ""}${run.stderr ?? ""}`;
  const tally = tallyOf(output);
  if (run.status === 0) {
    // The suite's red "failed" count is the baseline's scenarios (features these servers do not offer).
    const expected = tally ? ` (${tally.failed} expected failures, see conformance-baseline.yml)` : "";
    console.log(`conformance: ${server.name} passed${expected}`);
  } else {
    process.stdout.write(output);
    console.error(`conformance: ${server.name} FAILED (exit ${run.status})`);
    failed += 1;
  }
}
process.exit(failed ? 1 : 0);
