/** Service: the list of tools and streams. Is a unit running, which failed, what did it log. */
import pkg from "../package.json" with { type: "json" };
import { defineServer } from "./kit.ts";
import { journalFollowStream } from "./streams/journal-follow.ts";
import { journalTailTool } from "./tools/journal-tail.ts";
import { listFailedUnits } from "./tools/list-failed-units.ts";
import { serviceStatus } from "./tools/service-status.ts";

export const server = defineServer({
  package: pkg,
  instructions:
    "Read-only systemd diagnostics. For 'a service is broken': list_failed_units, then service_status and journal_tail of it.",
  tools: [serviceStatus, listFailedUnits, journalTailTool],
  streams: [journalFollowStream],
});
