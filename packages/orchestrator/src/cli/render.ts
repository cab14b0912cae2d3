/**
 * A tool's result for a person: the summary, the top-level facts in one line each, then the result's main
 * list as a compact table (the columns that hold plain values, at most MAX_ROWS rows). `--json` is for machines.
 */

const MAX_ROWS = 20;
/** A table line fits a wide terminal. */
const MAX_WIDTH = 120;
const MAX_CELL = 28;
const MAX_FACT = 90;
/** Fields every result carries that say nothing to a reader here. */
const QUIET = new Set(["summary", "run_id", "truncated", "omitted"]);

type Row = Record<string, unknown>;

const isRow = (v: unknown): v is Row => typeof v === "object" && v !== null && !Array.isArray(v);

/** A value as one short cell: plain values as they are, lists joined, objects as compact JSON. */
export function cell(v: unknown): string {
  const text =
    v === null || v === undefined
      ? "-"
      : typeof v === "string"
        ? v
        : Array.isArray(v) && v.every((x) => typeof x !== "object")
          ? v.join(",")
          : typeof v === "object"
            ? JSON.stringify(v)
            : String(v);
  return text.length > MAX_CELL ? `${text.slice(0, MAX_CELL - 1)}…` : text;
}

/**
 * The columns worth a table: plain values (or null) in every row, not the same in every row (a constant says
 * nothing per row), in the first row's order, as many as the line fits in MAX_WIDTH.
 */
function columns(rows: readonly Row[]): string[] {
  const first = rows[0] ?? {};
  const plain = Object.keys(first).filter((k) =>
    rows.every((r) => r[k] === null || r[k] === undefined || typeof r[k] !== "object"),
  );
  const varying = rows.length > 1 ? plain.filter((k) => rows.some((r) => cell(r[k]) !== cell(first[k]))) : plain;
  const chosen: string[] = [];
  let width = 2;
  for (const k of varying) {
    const w = Math.max(k.length, ...rows.slice(0, MAX_ROWS).map((r) => cell(r[k]).length)) + 2;
    // A column that does not fit is left out; a narrower one after it may still fit.
    if (chosen.length > 0 && width + w > MAX_WIDTH) continue;
    chosen.push(k);
    width += w;
  }
  return chosen;
}

/**
 * A top-level field on one line: an object as `key value, …` (scanned: dirs 226, files 2438), an empty one or no
 * value as `none` (a new user read `note: -` and an empty `connections:` as broken), a list of plain values as `a, b` (a person reads `servers: 192.0.2.1, 192.0.2.2`, not JSON), cut at
 * MAX_FACT.
 */
function fact(v: unknown): string {
  const text = isRow(v)
    ? Object.keys(v).length === 0
      ? "none"
      : Object.entries(v)
          .map(([k, x]) => `${k} ${typeof x === "object" && x !== null ? JSON.stringify(x) : String(x)}`)
          .join(", ")
    : v === null || v === undefined
      ? "none"
      : Array.isArray(v) && v.every((x) => typeof x !== "object" || x === null)
        ? v.join(", ")
        : typeof v === "object"
          ? JSON.stringify(v)
          : String(v);
  return text.length > MAX_FACT ? `${text.slice(0, MAX_FACT - 1)}…` : text;
}

export function table(rows: readonly Row[]): string[] {
  const cols = columns(rows);
  if (cols.length === 0) return rows.slice(0, MAX_ROWS).map((r) => `  ${cell(r)}`);
  const shown = rows.slice(0, MAX_ROWS).map((r) => cols.map((c) => cell(r[c])));
  const widths = cols.map((c, i) => Math.max(c.length, ...shown.map((r) => r[i]?.length ?? 0)));
  const line = (cells: readonly string[]) =>
    `  ${cells
      .map((s, i) => s.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd()}`;
  const out = [line(cols), ...shown.map(line)];
  if (rows.length > MAX_ROWS) out.push(`  … ${rows.length - MAX_ROWS} more rows (--json for all of them)`);
  return out;
}

/** What a field means, from the tool's output schema (its `.describe()` text), when known. */
export type FieldNotes = (key: string) => string | undefined;

/** The notes of a tool's output shape: each field's description. */
export function notesOf(shape: Readonly<Record<string, { description?: string | undefined }>> | undefined): FieldNotes {
  return (key) => (shape && Object.hasOwn(shape, key) ? shape[key]?.description : undefined);
}

/**
 * The summary, then `key: value` for plain fields, then each non-empty list of objects as a table. A bare number
 * says nothing on its own (`hidden: 14`): it comes with what the tool's schema says it counts.
 */
export function renderResult(result: Row, fallbackTitle: string, notes: FieldNotes = () => undefined): string {
  const lines: string[] = [typeof result.summary === "string" ? result.summary : fallbackTitle];
  const lists: Array<[string, Row[]]> = [];
  const facts: string[] = [];
  for (const [key, value] of Object.entries(result)) {
    if (QUIET.has(key)) continue;
    if (Array.isArray(value) && value.length > 0 && value.every(isRow)) lists.push([key, value]);
    else if (Array.isArray(value) && value.length === 0) continue;
    else {
      const note = typeof value === "number" ? notes(key) : undefined;
      facts.push(`  ${key}: ${fact(value)}${note ? ` (${note})` : ""}`);
    }
  }
  lines.push(...facts);
  for (const [key, rows] of lists) lines.push(`${key} (${rows.length}):`, ...table(rows));
  if (result.truncated === true) {
    lines.push(`  … ${cell(result.omitted)} more the server did not send (limit= raises its cap)`);
  }
  return lines.join("\n");
}
