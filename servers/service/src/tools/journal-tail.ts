/** journal_tail: the last lines a unit logged, from `journalctl --output=json`; bounded, cut, secrets masked. */
import { command, DiagError, MAX_LIST_LIMIT, slot } from "@roadnerd/conventions";
import { z } from "zod";
import { defineTool } from "../kit.ts";
import { JOURNAL_FIELDS, journalLine } from "../parse/journal-json.ts";
import { requireSystemd } from "../systemd/booted.ts";
import { execFailure } from "../systemd/exec-errors.ts";
import { UNIT_NAME, unitName, unitNameField } from "../systemd/unit-name.ts";

export const DEFAULT_TAIL_LINES = 120;

/** One more line than asked for: its presence says the tail was cut. */
export const journalTail = command("journalctl", [
  slot("unit", UNIT_NAME, { prefix: "--unit=" }),
  slot("lines", /^[1-9][0-9]{0,3}$/, { prefix: "--lines=" }),
  "--output=json",
  `--output-fields=${JOURNAL_FIELDS}`,
  "--no-pager",
  "--quiet",
]);

export const journalTailTool = defineTool({
  name: "journal_tail",
  summary: "The last lines a systemd unit logged, secrets masked.",
  input: {
    name: unitNameField,
    lines: z
      .number()
      .int()
      .min(1)
      .max(MAX_LIST_LIMIT)
      .optional()
      .describe(`how many of the latest lines (default ${DEFAULT_TAIL_LINES}, max ${MAX_LIST_LIMIT})`),
  },
  output: {
    name: z.string().describe("the unit, e.g. ssh.service"),
    lines: z.array(z.string()).describe("oldest first: `<ISO time> <program>[<pid>]: <message>`"),
    truncated: z.boolean().describe("older lines exist beyond `lines`"),
  },
  example: { name: "ssh", lines: 20 },
  commands: [journalTail],
  // The last lines say why a unit stopped: the summary has the very last, the view the two before it.
  view: (r) => ({ before: r.lines.slice(-3, -1) }),
  summarize: (r) => {
    if (r.lines.length === 0) return `no journal lines for ${r.name}`;
    return `${r.lines.length}${r.truncated ? " latest" : ""} lines of ${r.name}; last: ${r.lines.at(-1)}`;
  },
  async handler(input, ctx) {
    const name = unitName(input.name);
    const want = input.lines ?? DEFAULT_TAIL_LINES;
    requireSystemd(ctx.config);
    // Fields over 4 KiB come as null, so an entry stays under ~5 KiB: room for every line asked for.
    const result = await ctx.exec(journalTail, { unit: name, lines: want + 1 }, { maxBytes: 4 * 1024 * 1024 });
    if (result.exitCode !== 0) throw execFailure("journalctl", result);
    const raw = result.stdout.split("\n").filter((l) => l.length > 0);
    // Output capped by exec: the last line may be cut mid-entry.
    if (result.truncated) raw.pop();
    const lines = raw.map((l) => journalLine(l)).filter((l): l is string => l !== undefined);
    if (raw.length > 0 && lines.length === 0) {
      throw new DiagError("E_EXEC_FAILED", "journalctl did not print JSON entries");
    }
    const cut = lines.length > want || result.truncated;
    return { name, lines: lines.slice(-want), truncated: cut };
  },
});
