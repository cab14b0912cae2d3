/**
 * Service's per-tool latency against the commands underneath, measured the same way in the same run. This
 * machine does not boot with systemd, so the bench boots a real one (packages/testkit's harness). The server
 * runs inside it (its PID and mount namespaces, as on a machine booted with systemd), where it asks systemd's
 * private bus (ADR 0070); the baseline is the very command the tool would otherwise run, through an nsenter
 * wrapper (whose own cost is printed beside it). A second server out here, which systemd refuses on its bus
 * (it cannot see the pid), answers through the same wrappers with EXEC_PATH at them: the command path, like
 * with like. Then the error path of this machine's own root (systemd not PID 1), against /healthz. Used by
 * `pnpm bench`.
 */
import { command } from "@roadnerd/conventions";
import { testExec } from "@roadnerd/conventions/testing";
import { type BenchContext, bootSystemd } from "@roadnerd/testkit";
import { journalTail } from "../src/tools/journal-tail.ts";
import { listFailed, showFailed } from "../src/tools/list-failed-units.ts";
import { unitShow } from "../src/tools/service-status.ts";
import { DEMO_UNITS } from "../test/readme-world.ts";

const EXEC_OPTIONS = { timeoutMs: 5_000 };

/** `true` through the same nsenter wrapper as the baseline: what it pays to get inside before systemctl starts. */
const wrappedTrue = command("true", []);

export async function benchLatency(b: BenchContext): Promise<void> {
  const harness = await bootSystemd({ units: DEMO_UNITS });
  try {
    const bin = harness.binariesInside(["systemctl", "journalctl", "true"]);
    const exec = testExec([unitShow, listFailed, showFailed, journalTail, wrappedTrue], bin);
    const inside = await b.start({}, harness.nsenter);
    const srv = await b.start({ EXEC_PATH: bin, SYSTEMD_BOOTED_DIR: harness.path("/run/systemd/system") });
    try {
      const show = () => exec(unitShow, { unit: "roadnerd-demo.service" }, EXEC_OPTIONS);
      const listAndShow = () =>
        Promise.all([exec(listFailed, undefined, EXEC_OPTIONS), exec(showFailed, undefined, EXEC_OPTIONS)]);
      await b.pair(
        "service_status (bus)",
        () => b.call(inside, "service_status", { name: "roadnerd-demo" }),
        "systemctl show (nsenter)",
        show,
      );
      await b.pair(
        "nsenter's own cost",
        () => exec(wrappedTrue, undefined, EXEC_OPTIONS),
        "systemctl show (nsenter)",
        show,
        {
          info: true,
        },
      );
      await b.pair(
        "list_failed_units (bus)",
        () => b.call(inside, "list_failed_units", {}),
        "list-units + show (parallel)",
        listAndShow,
      );
      // The path where the bus is not ours (not root, another PID namespace): informational, the tools' own
      // path on a machine booted with systemd is the bus above.
      await b.pair(
        "service_status (cmd)",
        () => b.call(srv, "service_status", { name: "roadnerd-demo" }),
        "systemctl show (nsenter)",
        show,
        { info: true },
      );
      await b.pair(
        "list_failed_units (cmd)",
        () => b.call(srv, "list_failed_units", {}),
        "list-units + show",
        listAndShow,
        { info: true },
      );
      await b.pair(
        "journal_tail (120)",
        () => b.call(srv, "journal_tail", { name: "roadnerd-demo" }),
        "journalctl -o json --lines=121",
        () => exec(journalTail, { unit: "roadnerd-demo.service", lines: 121 }, EXEC_OPTIONS),
      );
    } finally {
      srv.kill();
      inside.kill();
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
