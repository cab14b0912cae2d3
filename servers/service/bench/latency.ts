/**
 * Service's per-tool latency against the commands underneath, measured the same way in the same run. This
 * machine does not boot with systemd, so the bench boots a real one (packages/testkit's harness) and both
 * sides run inside it through the same nsenter wrappers: the server (running out here) with EXEC_PATH at
 * them, the baseline as the very commands the tools declare through the kernel's exec. Then the error path
 * of this machine's own root (systemd not PID 1), against /healthz. Used by `pnpm bench`.
 */
import { testExec } from "@roadnerd/conventions/testing";
import { type BenchContext, bootSystemd } from "@roadnerd/testkit";
import { journalTail } from "../src/tools/journal-tail.ts";
import { listFailed, showFailed } from "../src/tools/list-failed-units.ts";
import { unitShow } from "../src/tools/service-status.ts";
import { DEMO_UNITS } from "../test/readme-world.ts";

const EXEC_OPTIONS = { timeoutMs: 5_000 };

export async function benchLatency(b: BenchContext): Promise<void> {
  const harness = await bootSystemd({ units: DEMO_UNITS });
  try {
    const bin = harness.binariesInside(["systemctl", "journalctl"]);
    const exec = testExec([unitShow, listFailed, showFailed, journalTail], bin);
    const srv = await b.start({ EXEC_PATH: bin, SYSTEMD_BOOTED_DIR: harness.path("/run/systemd/system") });
    try {
      await b.pair(
        "service_status",
        () => b.call(srv, "service_status", { name: "roadnerd-demo" }),
        "systemctl show (nsenter)",
        () => exec(unitShow, { unit: "roadnerd-demo.service" }, EXEC_OPTIONS),
      );
      await b.pair(
        "list_failed_units",
        () => b.call(srv, "list_failed_units", {}),
        "list-units + show (parallel)",
        () => Promise.all([exec(listFailed, undefined, EXEC_OPTIONS), exec(showFailed, undefined, EXEC_OPTIONS)]),
      );
      await b.pair(
        "journal_tail (120)",
        () => b.call(srv, "journal_tail", { name: "roadnerd-demo" }),
        "journalctl -o json --lines=121",
        () => exec(journalTail, { unit: "roadnerd-demo.service", lines: 121 }, EXEC_OPTIONS),
      );
    } finally {
      srv.kill();
    }
  } finally {
    await harness.stop();
  }
  // This machine's own root: every call is E_UNSUPPORTED from one stat, no process.
  const host = await b.start({});
  try {
    await b.pair(
      "E_UNSUPPORTED (no systemd)",
      () => b.call(host, "service_status", { name: "ssh" }, 501),
      "/healthz (the HTTP floor)",
      () => b.floor(host),
      { withinMs: 0.3 },
    );
  } finally {
    host.kill();
  }
}

/** The generic figures (MCP cost, RSS curve) run against the README's world: a booted systemd with test units. */
export { startReadmeWorld as world } from "../test/readme-world.ts";
