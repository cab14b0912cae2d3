/**
 * Boot a throwaway systemd (PID 1 in its own namespaces over an overlay of /) for poking at by hand, print how
 * to reach it, and tear it down on Ctrl-C. Run it sealed, as root:
 *   node scripts/sealed.mjs scripts/run-ts.mjs scripts/systemd-harness.ts
 */
import { bootSystemd } from "@roadnerd/testkit";

const harness = await bootSystemd({
  units: [
    {
      name: "rn-sleeper.service",
      body: "[Unit]\nDescription=RoadNerd sleeper\n[Service]\nExecStart=/bin/sh -c 'while :; do sleep 1; done'",
    },
    {
      name: "rn-broken.service",
      body: "[Unit]\nDescription=RoadNerd broken\n[Service]\nType=oneshot\nExecStart=/bin/false",
    },
  ],
});
console.log(`systemd is PID ${harness.pid}; reach it with:\n  ${harness.nsenter.join(" ")} systemctl status`);
console.log("Ctrl-C tears it down.");
// The harness's own signal and exit hooks (installed at boot, so they run first) kill systemd and remove the
// cgroup and the directory; this line only says so.
process.once("exit", () => console.log("stopped: namespaces, mounts and cgroup removed"));
setInterval(() => {}, 60_000);
