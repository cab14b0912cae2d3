/** The units the live tests install in a booted systemd: one running, one failed, one that logs known lines. */
import type { HarnessUnit } from "@roadnerd/testkit";

export const SLEEPER: HarnessUnit = {
  name: "rn-sleeper.service",
  body: "[Unit]\nDescription=RoadNerd sleeper\n[Service]\nExecStart=/bin/sh -c 'while :; do sleep 1; done'",
};

/** Oneshot, so the boot waits for its failure. */
export const BROKEN: HarnessUnit = {
  name: "rn-broken.service",
  body: "[Unit]\nDescription=RoadNerd broken\n[Service]\nType=oneshot\nExecStart=/bin/false",
};

/** Logs three known lines (one with a secret) and one 1,092-character line, then stays active (exited). */
export const LOGGER: HarnessUnit = {
  name: "rn-logger.service",
  body: [
    "[Unit]",
    "Description=RoadNerd logger",
    "[Service]",
    "Type=oneshot",
    "RemainAfterExit=yes",
    "SyslogIdentifier=rn-logger",
    "ExecStart=/bin/sh -c 'echo first line; echo connecting with password=hunter2 now; seq -s x 300; echo last line'",
  ].join("\n"),
};

/** Not started at boot: the stream tests start it after the stream has begun; each start logs one line. */
export const LATE: HarnessUnit = {
  name: "rn-late.service",
  start: false,
  body: [
    "[Unit]",
    "Description=RoadNerd late logger",
    "[Service]",
    "Type=oneshot",
    "SyslogIdentifier=rn-late",
    "ExecStart=/bin/sh -c 'echo late line token=abc123'",
  ].join("\n"),
};

export const TEST_UNITS = [SLEEPER, BROKEN, LOGGER, LATE];

/** What `seq -s x 300` prints: the long line. */
export const SEQ_LINE = Array.from({ length: 300 }, (_, i) => i + 1).join("x");
