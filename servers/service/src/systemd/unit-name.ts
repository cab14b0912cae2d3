/**
 * systemd's unit-name grammar (src/basic/unit-name.c): `prefix[@instance].type`, at most 255 characters, from
 * letters, digits and `:-_.\` (an instance may also hold `@`). A bare name gets `.service`, as systemctl
 * itself does. A valid name has no space, no `/`, no shell or glob character, so it is exactly one argument
 * naming one unit. Names starting with `-` (only the root mount `-.mount` does) are refused: in argv they would
 * read as an option.
 */
import { z } from "zod";

export const UNIT_TYPES = [
  "service",
  "socket",
  "target",
  "device",
  "mount",
  "automount",
  "swap",
  "timer",
  "path",
  "slice",
  "scope",
] as const;

/** systemd's UNIT_NAME_MAX is 256 with the terminating NUL. */
export const MAX_UNIT_NAME = 255;

const CHARS = String.raw`A-Za-z0-9:_.\\-`;
/** A full unit name: the slot pattern every command that names a unit uses. */
export const UNIT_NAME = new RegExp(
  // A template (`foo@.service`) is not a unit that runs: the instance after `@` must not be empty.
  String.raw`^(?=.{1,${MAX_UNIT_NAME}}$)[${CHARS}]+(@[@${CHARS}]+)?\.(${UNIT_TYPES.join("|")})$`,
);
/** What a caller may send: a unit name, or a bare name that becomes `<name>.service`. */
const INPUT = new RegExp(String.raw`^[A-Za-z0-9:_.\\@][@${CHARS}]*$`);

const HAS_TYPE = new RegExp(String.raw`\.(${UNIT_TYPES.join("|")})$`);

/** `ssh` → `ssh.service`; `cron.timer` stays. Does not validate: see isUnitName. */
export function unitName(input: string): string {
  return HAS_TYPE.test(input) ? input : `${input}.service`;
}

export function isUnitName(name: string): boolean {
  return UNIT_NAME.test(name) && !name.startsWith("-");
}

export const unitNameField = z
  .string()
  .min(1)
  .max(MAX_UNIT_NAME)
  .regex(INPUT, "expected a unit name such as ssh, ssh.service or getty@tty1.service (letters, digits, :-_.\\@)")
  .refine((v) => isUnitName(unitName(v)), {
    message: `expected one systemd unit name: prefix[@instance].type, at most ${MAX_UNIT_NAME} characters with the suffix`,
  })
  .describe("unit name, e.g. ssh or NetworkManager.service (a bare name gets .service)");
