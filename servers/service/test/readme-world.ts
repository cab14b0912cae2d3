/**
 * The world the README's curl lines and the root suites run in: a real systemd booted in its own namespaces
 * (packages/testkit's harness) with two demo units — one that logs a heartbeat every half second, one that
 * has failed — and the server, running out here, pointed at it: EXEC_PATH holds wrappers that run the real
 * systemctl and journalctl inside it, and SYSTEMD_BOOTED_DIR is its /run/systemd/system. On this machine
 * systemd is not PID 1, so without this world every call would be E_UNSUPPORTED.
 */
import { bootSystemd } from "@roadnerd/testkit";

export const DEMO_UNITS = [
  {
    name: "roadnerd-demo.service",
    body: [
      "[Unit]",
      "Description=RoadNerd demo heartbeat",
      "[Service]",
      "SyslogIdentifier=roadnerd-demo",
      "ExecStart=/bin/sh -c 'i=0; while :; do i=$$((i+1)); echo heartbeat $$i; sleep 0.5; done'",
    ].join("\n"),
  },
  {
    name: "roadnerd-demo-broken.service",
    body: "[Unit]\nDescription=RoadNerd demo that fails\n[Service]\nType=oneshot\nExecStart=/bin/false",
  },
];

export async function startReadmeWorld() {
  const harness = await bootSystemd({ units: DEMO_UNITS });
  try {
    const bin = harness.binariesInside(["systemctl", "journalctl"]);
    return {
      env: { EXEC_PATH: bin, SYSTEMD_BOOTED_DIR: harness.path("/run/systemd/system") },
      close: () => harness.stop(),
    };
  } catch (err) {
    await harness.stop();
    throw err;
  }
}
