/**
 * list_failed_units: every unit in the failed state, with when it failed. From systemd's bus (systemd/bus.ts:
 * the manager's ListUnitsFiltered, then each failed unit's timestamps), or where the bus is not ours to use two
 * read-only commands in parallel: `systemctl list-units --state=failed --output=json` (the list) and one
 * `systemctl show` of the failed units (their timestamps), never one process per unit.
 */
import {
  capList,
  command,
  cutText,
  limitInput,
  maskText,
  nextField,
  type ToolContext,
  truncationFields,
} from "@roadnerd/conventions";
import { z } from "zod";
import { defineTool } from "../kit.ts";
import { type ListedUnit, parseListUnits } from "../parse/list-units.ts";
import { parseShow, type ShowBlock } from "../parse/systemctl-show.ts";
import { isoFromSystemd } from "../parse/timestamp.ts";
import { requireSystemd } from "../systemd/booted.ts";
import { failedUnits, systemdBus } from "../systemd/bus.ts";
import { execFailure } from "../systemd/exec-errors.ts";

export const listFailed = command("systemctl", ["list-units", "--state=failed", "--output=json"]);
/** The pattern `*` is systemctl's own glob (no shell here), filtered by --state like list-units. */
export const showFailed = command("systemctl", [
  "show",
  "--state=failed",
  "--property=Id,InactiveEnterTimestamp,InactiveEnterTimestampMonotonic",
  "--",
  "*",
]);

/** The commands' answer, where the bus is not ours to use. */
async function commands(ctx: {
  exec: ToolContext["exec"];
}): Promise<{ list: ListedUnit[]; shown: Map<string, ShowBlock> }> {
  const [list, show] = await Promise.all([ctx.exec(listFailed), ctx.exec(showFailed)]);
  if (list.exitCode !== 0) throw execFailure("systemctl list-units", list);
  // The timestamps are a bonus: without them the list still answers.
  const shown = new Map(show.exitCode === 0 ? parseShow(show.stdout).map((b) => [b.Id ?? "", b]) : []);
  return { list: parseListUnits(list.stdout), shown };
}

const failedUnit = z.object({
  name: z.string().describe("unit name, e.g. nginx.service"),
  since: z.string().nullable().describe("ISO time it failed; null if systemd does not say"),
  description: z.string().describe("the unit's Description="),
});

export const listFailedUnits = defineTool({
  name: "list_failed_units",
  summary: "Which systemd units have failed, and since when.",
  input: { limit: limitInput },
  output: {
    failed: z.array(failedUnit).describe("failed units, most recent first"),
    ...truncationFields,
    next: nextField,
  },
  example: {},
  commands: [listFailed, showFailed],
  view: (r) => ({ failed: r.failed.map((u) => u.name), more: r.omitted || undefined }),
  summarize: (r) => {
    const total = r.failed.length + r.omitted;
    if (total === 0) return "no failed units";
    const names = r.failed.slice(0, 3).map((u) => u.name);
    const more = total > names.length ? ` and ${total - names.length} more` : "";
    return `${total} failed: ${names.join(", ")}${more}`;
  },
  async handler(input, ctx) {
    requireSystemd(ctx.config);
    const { list, shown } = (await failedUnits(ctx.use(systemdBus), ctx.remaining)) ?? (await commands(ctx));
    // The monotonic µs orders failures within the same second.
    const order = (name: string) => Number(shown.get(name)?.InactiveEnterTimestampMonotonic ?? 0) || 0;
    const rows = list
      .sort((a, b) => order(b.unit) - order(a.unit) || a.unit.localeCompare(b.unit))
      .map((u) => ({
        name: u.unit,
        since: isoFromSystemd(shown.get(u.unit)?.InactiveEnterTimestamp),
        description: cutText(maskText(u.description), 200),
      }));
    const { items, omitted } = capList(rows, input.limit);
    // Why the latest one failed is in its journal.
    const latest = items[0]?.name;
    const next = latest && { tool: "service/journal_tail", args: { name: latest }, why: `why ${latest} failed` };
    return { failed: items, truncated: omitted > 0, omitted, ...(next ? { next } : {}) };
  },
});
