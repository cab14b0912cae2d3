/**
 * service_status: is a unit loaded and running, in which sub-state, since when; from systemd's bus
 * (systemd/bus.ts), or `systemctl show` where the bus is not ours to use.
 */
import { command, cutText, maskText, slot, type ToolContext } from "@roadnerd/conventions";
import { z } from "zod";
import { defineTool } from "../kit.ts";
import { parseShow } from "../parse/systemctl-show.ts";
import { requireSystemd } from "../systemd/booted.ts";
import { showUnit, systemdBus } from "../systemd/bus.ts";
import { execFailure } from "../systemd/exec-errors.ts";
import { UNIT_NAME, unitName, unitNameField } from "../systemd/unit-name.ts";
import { UNIT_PROPERTIES, unitState } from "../systemd/unit-state.ts";

/** The command's answer, where the bus is not ours to use. */
async function show(ctx: { exec: ToolContext["exec"] }, name: string) {
  const result = await ctx.exec(unitShow, { unit: name });
  if (result.exitCode !== 0) throw execFailure("systemctl show", result);
  return parseShow(result.stdout)[0] ?? {};
}

/** `systemctl show` of one unit, only the properties we read; `--` so nothing after it is an option. */
export const unitShow = command("systemctl", [
  "show",
  `--property=${UNIT_PROPERTIES.join(",")}`,
  "--",
  slot("unit", UNIT_NAME),
]);

/** One unit's state: service_status's answer (the kernel adds summary and run_id). */
const unitStateSchema = z.object({
  name: z.string().describe("the unit asked about, e.g. ssh.service"),
  loaded: z.string().describe("LoadState: loaded, not-found (no such unit), masked, bad-setting, error"),
  active: z.string().describe("ActiveState: active, inactive, failed, activating, deactivating, reloading"),
  sub: z.string().describe("SubState: running, exited, dead, failed, listening, waiting…"),
  since: z.string().nullable().describe("ISO time it entered that state, as `systemctl status` says; null if never"),
  description: z.string().describe("the unit's Description="),
  result: z.string().nullable().describe("Result of its last run: success, exit-code, signal, timeout…"),
  unit_file_state: z.string().nullable().describe("enabled, disabled, static, masked…; null for no unit file"),
});

/** What unitState() builds from `systemctl show` (systemd/unit-state.ts). */
export type UnitState = z.infer<typeof unitStateSchema>;

export const serviceStatus = defineTool({
  name: "service_status",
  summary: "Is a systemd unit loaded and running, since when.",
  input: { name: unitNameField },
  output: unitStateSchema.shape,
  example: { name: "ssh" },
  commands: [unitShow],
  view: (r) => ({ active: r.active, sub: r.sub, result: r.result, enabled: r.unit_file_state, since: r.since }),
  summarize: (r) => {
    if (r.loaded === "not-found") return `no unit named ${r.name} (not-found)`;
    const since = r.since ? ` since ${r.since}` : "";
    const why = r.active === "failed" && r.result ? ` (${r.result})` : "";
    return `${r.name}: ${r.active} (${r.sub})${why}${since}; ${r.loaded}`;
  },
  async handler(input, ctx) {
    const name = unitName(input.name);
    requireSystemd(ctx.config);
    const block =
      (await showUnit(ctx.use(systemdBus), name, UNIT_PROPERTIES, ctx.remaining)) ?? (await show(ctx, name));
    const state = unitState(name, block);
    // A Description= is free text a unit's author wrote (a connection URL with its password, now and then).
    return { ...state, description: cutText(maskText(state.description), 200) };
  },
});
