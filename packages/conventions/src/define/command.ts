/**
 * Commands a tool may run, declared once beside the tool: a binary and an argument template whose user
 * values fill typed slots. The template is both the allowlist and the argv builder, so the argv is never
 * written twice and a value can never become an option or a second argument.
 */
import { DiagError } from "../errors/errors.ts";

/** A user-supplied argument: validated by an anchored pattern, never allowed to look like an option. */
export interface ArgSlot<N extends string = string> {
  readonly slot: N;
  readonly pattern: RegExp;
  /** Fixed text before the value in the same argument, e.g. `--unit=`. */
  readonly prefix: string;
}

export type ArgTemplate = ReadonlyArray<string | ArgSlot>;

export interface Command<N extends string = string> {
  readonly binary: string;
  readonly args: ReadonlyArray<string | ArgSlot<N>>;
}

type SlotName<E> = E extends ArgSlot<infer N> ? N : never;

/** Values for a command's slots, by slot name. */
export type SlotValues<N extends string> = Readonly<Record<N, string | number>>;

const MAX_SLOT_VALUE = 4096;
const BINARY_NAME = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

export function slot<N extends string>(name: N, pattern: RegExp, options: { prefix?: string } = {}): ArgSlot<N> {
  // An unanchored pattern would accept "eth0 --flush" because it contains "eth0".
  if (!pattern.source.startsWith("^") || !pattern.source.endsWith("$")) {
    throw new Error(`slot ${name}: pattern must be anchored with ^…$`);
  }
  return Object.freeze({ slot: name, pattern, prefix: options.prefix ?? "" });
}

export function command<const A extends ReadonlyArray<string | ArgSlot>>(
  binary: string,
  args: A,
): Command<SlotName<A[number]>> {
  if (!BINARY_NAME.test(binary)) throw new Error(`command binary must be a bare name, not a path: ${binary}`);
  return Object.freeze({ binary, args: Object.freeze([...args]) }) as Command<SlotName<A[number]>>;
}

/** A value fits a slot: the pattern, no leading `-`, no NUL or line breaks, bounded. */
export function fitsSlot(value: string, part: ArgSlot): boolean {
  return (
    value.length > 0 &&
    value.length <= MAX_SLOT_VALUE &&
    !value.startsWith("-") &&
    !/[\0\n\r]/.test(value) &&
    part.pattern.test(value)
  );
}

/** Build argv from a command's template and the slot values. Throws E_INVALID_INPUT for a value that does not fit. */
export function buildArgv(cmd: Command, values: Readonly<Record<string, string | number>> = {}): string[] {
  return cmd.args.map((part) => {
    if (typeof part === "string") return part;
    const raw = Object.hasOwn(values, part.slot) ? values[part.slot] : undefined;
    if (raw === undefined) throw new DiagError("E_INTERNAL", `${cmd.binary}: no value for slot ${part.slot}`);
    const value = String(raw);
    if (!fitsSlot(value, part)) {
      throw new DiagError(
        "E_INVALID_INPUT",
        `${cmd.binary}: value for ${part.slot} not allowed: ${value.slice(0, 60)}`,
      );
    }
    return `${part.prefix}${value}`;
  });
}

export function matchesTemplate(args: readonly string[], template: ArgTemplate): boolean {
  if (args.length !== template.length) return false;
  return template.every((part, i) => {
    const arg = args[i] as string;
    if (typeof part === "string") return arg === part;
    return arg.startsWith(part.prefix) && fitsSlot(arg.slice(part.prefix.length), part);
  });
}

/** Refuse before any process exists unless the binary and the exact argv fit one of the allowed commands. */
export function checkAllowed(allowed: readonly Command[], binary: string, args: readonly string[]): void {
  const templates = allowed.filter((c) => c.binary === binary);
  if (templates.length === 0) throw new DiagError("E_UNSUPPORTED", `binary not allowlisted: ${binary.slice(0, 64)}`);
  if (!templates.some((c) => matchesTemplate(args, c.args))) {
    throw new DiagError("E_UNSUPPORTED", `arguments not allowlisted for ${binary}`);
  }
}

/** The binaries a list of commands may run, each once. */
export function binariesOf(commands: readonly Command[]): string[] {
  return [...new Set(commands.map((c) => c.binary))];
}
