/** `key=value` arguments as tool params: JSON values where they parse (numbers, true, {…}), else strings. */
export function parseKeyValues(args: readonly string[]): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const arg of args) {
    const eq = arg.indexOf("=");
    if (eq <= 0) throw new Error(`expected key=value, got ${arg.slice(0, 60)}`);
    const key = arg.slice(0, eq);
    const raw = arg.slice(eq + 1);
    let value: unknown = raw;
    if (/^(-?\d+(\.\d+)?|true|false|null|\{.*\}|\[.*\])$/s.test(raw)) {
      try {
        value = JSON.parse(raw);
      } catch {
        value = raw;
      }
    }
    params[key] = value;
  }
  return params;
}
