/** One unit's state from `systemctl show`: the fields service_status answers, `since` as systemctl status picks it. */
import type { ShowBlock } from "../parse/systemctl-show.ts";
import { isoFromSystemd } from "../parse/timestamp.ts";
import type { UnitState } from "../tools/service-status.ts";

/** The properties asked for: only these, so the output stays small whatever the systemd version. */
export const UNIT_PROPERTIES = [
  "Id",
  "LoadState",
  "ActiveState",
  "SubState",
  "Description",
  "Result",
  "UnitFileState",
  "ActiveEnterTimestamp",
  "ActiveExitTimestamp",
  "InactiveEnterTimestamp",
  "InactiveExitTimestamp",
] as const;

/**
 * When the unit entered its current state, the timestamp `systemctl status` shows after "since"
 * (systemctl-show.c): active/reloading → ActiveEnter, inactive/failed → InactiveEnter, activating →
 * InactiveExit, deactivating → ActiveExit.
 */
export function sinceOf(block: ShowBlock): string | null {
  const active = block.ActiveState ?? "";
  const key =
    active === "active" || active === "reloading"
      ? "ActiveEnterTimestamp"
      : active === "inactive" || active === "failed"
        ? "InactiveEnterTimestamp"
        : active === "activating"
          ? "InactiveExitTimestamp"
          : "ActiveExitTimestamp";
  return isoFromSystemd(block[key]);
}

export function unitState(name: string, block: ShowBlock): UnitState {
  const orNull = (v: string | undefined) => (v ? v : null);
  return {
    name: block.Id || name,
    loaded: block.LoadState || "unknown",
    active: block.ActiveState || "unknown",
    sub: block.SubState || "unknown",
    since: sinceOf(block),
    description: block.Description ?? "",
    result: orNull(block.Result),
    unit_file_state: orNull(block.UnitFileState),
  };
}
