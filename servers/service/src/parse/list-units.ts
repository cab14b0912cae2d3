/**
 * `systemctl list-units --output=json`: an array of `{ unit, load, active, sub, description }` (systemd 246+;
 * recorded from 252). Entries without a string `unit` are dropped rather than guessed at.
 */
import { DiagError } from "@roadnerd/conventions";

export interface ListedUnit {
  unit: string;
  load: string;
  active: string;
  sub: string;
  description: string;
}

const str = (v: unknown) => (typeof v === "string" ? v : "");

export function parseListUnits(text: string): ListedUnit[] {
  let json: unknown;
  try {
    json = JSON.parse(text.trim() === "" ? "[]" : text);
  } catch {
    throw new DiagError("E_EXEC_FAILED", "systemctl list-units did not print JSON (systemd older than 246?)");
  }
  if (!Array.isArray(json))
    throw new DiagError("E_EXEC_FAILED", "systemctl list-units printed JSON that is not a list");
  return json.flatMap((row: unknown) => {
    const r = (row ?? {}) as Record<string, unknown>;
    const unit = str(r.unit);
    if (!unit) return [];
    return [{ unit, load: str(r.load), active: str(r.active), sub: str(r.sub), description: str(r.description) }];
  });
}
