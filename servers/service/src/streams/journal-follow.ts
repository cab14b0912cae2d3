/**
 * journal_follow: each new line a unit logs, as a `message`, for a bounded time. One `journalctl --follow`
 * per client (its own process group), ended by the kernel when the duration ends or the client goes away.
 */
import { command, DiagError, slot } from "@roadnerd/conventions";
import { z } from "zod";
import { defineStream } from "../kit.ts";
import { JOURNAL_FIELDS, journalLine } from "../parse/journal-json.ts";
import { requireSystemd } from "../systemd/booted.ts";
import { UNIT_NAME, unitName, unitNameField } from "../systemd/unit-name.ts";

/** `--lines=0`: only what is logged from now on. */
export const journalFollow = command("journalctl", [
  slot("unit", UNIT_NAME, { prefix: "--unit=" }),
  "--follow",
  "--lines=0",
  "--output=json",
  `--output-fields=${JOURNAL_FIELDS}`,
  "--no-pager",
  "--quiet",
]);

export const journalFollowStream = defineStream({
  name: "journal_follow",
  summary: "Each new line a systemd unit logs, for a bounded time (journalctl --follow).",
  input: { name: unitNameField },
  message: {
    name: z.string().describe("the unit, e.g. ssh.service"),
    line: z.string().describe("`<ISO time> <program>[<pid>]: <message>`, cut, secrets masked"),
  },
  example: { name: "ssh" },
  commands: [journalFollow],
  // Each client follows from the moment it connects.
  shared: false,
  summarize: (m) => m.line,
  async run(input, ctx) {
    const name = unitName(input.name);
    requireSystemd(ctx.config);
    const lines = await ctx.execLines(journalFollow, { unit: name });
    for await (const raw of lines) {
      const line = journalLine(raw);
      if (line !== undefined && !(await ctx.emit({ name, line }))) return;
    }
    const end = await lines.ended;
    if (end.reason === "exit" && end.exitCode !== 0) {
      // No exit code: something else on the machine killed it (a signal), not a journalctl error.
      const how = end.exitCode === null ? "was ended by a signal" : `exited with ${end.exitCode}`;
      throw new DiagError(
        "E_EXEC_FAILED",
        `journalctl --follow ${how}${end.stderr.trim() ? `: ${end.stderr.trim()}` : ""}`,
      );
    }
  },
});
