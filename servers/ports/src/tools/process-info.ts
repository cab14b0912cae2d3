/**
 * process_info: one process by pid, or every process by name (its comm or its program's file name): name,
 * command line (masked), user, state, resident memory, start time, executable and systemd unit.
 */
import { readFileSync } from "node:fs";
import { capList, DiagError, limitInput, truncationFields } from "@roadnerd/conventions";
import { z } from "zod";
import { defineTool } from "../kit.ts";
import { userNames } from "../proc/passwd.ts";
import { bootTime, type ProcessFacts, processFacts, processName } from "../proc/process-facts.ts";
import { listPids, nextTurn, PIDS_PER_TURN } from "../proc/socket-owners.ts";
import { cmdField, pidField, unitField } from "../schemas.ts";

/** A process name: what ps shows (comm, at most 15 chars) or a program's file name; never a path. */
export const PROCESS_NAME = /^[A-Za-z0-9._@:+()~ -]{1,64}$/;

const processShape = z.object({
  pid: pidField,
  ppid: z.number().int().describe("parent pid"),
  name: z.string().describe("process name (comm)"),
  cmd: cmdField,
  exe: z.string().nullable().describe("executable (/proc/<pid>/exe); null when it cannot be read"),
  user: z.string().describe("user it runs as (name from /etc/passwd, else the uid)"),
  state: z.string().describe("kernel state, e.g. S (sleeping), R (running), Z (zombie)"),
  rss_mb: z.number().describe("resident memory in MB"),
  started: z.string().nullable().describe("start time, ISO 8601 UTC (to the second)"),
  unit: unitField,
});

function shown(f: ProcessFacts): z.input<typeof processShape> {
  const { uid: _uid, user_unit_of: _u, ...rest } = f;
  return rest;
}

/** argv[0]'s file name: `/usr/bin/python3 app.py` → python3. */
function programName(pid: number): string | null {
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] ?? "";
    return argv0.split(" ")[0]?.split("/").pop() || null;
  } catch {
    return null;
  }
}

export const processInfo = defineTool({
  name: "process_info",
  summary: "A process by pid or name: command, user, state, memory, systemd unit.",
  input: {
    pid: pidField.optional().describe("process id (give pid or name, not both)"),
    name: z
      .string()
      .regex(PROCESS_NAME, "expected a process name like nginx or java (letters, digits, . _ - @ : +; no /)")
      .optional()
      .describe("process name as ps shows it, or its program's file name, e.g. nginx (give pid or name)"),
    limit: limitInput,
  },
  output: { processes: z.array(processShape).describe("matching processes, by pid"), ...truncationFields },
  example: { name: "node" },
  view: (r) => ({
    // The summary names them; the view says each one's state and unit, by pid.
    names: [...new Set(r.processes.map((p) => p.name))],
    pids: r.processes.map((p) => `${p.pid} ${p.state.split(" ")[0]}${p.unit ? ` ${p.unit}` : ""}`),
    total: r.processes.length + r.omitted,
  }),
  summarize: (r) => {
    const total = r.processes.length + r.omitted;
    if (total === 0) return "no such process is running";
    const [p] = r.processes;
    if (total === 1 && p) {
      return `${p.name} (pid ${p.pid}) ${p.state}, user ${p.user}, ${p.rss_mb} MB, since ${p.started ?? "?"}${p.unit ? `, ${p.unit}` : ""}`;
    }
    return `${total} processes: ${r.processes
      .slice(0, 5)
      .map((q) => `${q.name} ${q.pid}`)
      .join(", ")}${total > 5 ? ", …" : ""}`;
  },
  async handler(input, ctx) {
    const hint = 'give exactly one of pid and name, e.g. {"pid":1} or {"name":"nginx"}';
    if ((input.pid === undefined) === (input.name === undefined)) {
      throw new DiagError("E_INVALID_INPUT", "process_info needs exactly one of pid and name", { hint });
    }
    const btime = bootTime();
    const userName = ctx.use(userNames);
    if (input.pid !== undefined) {
      const facts = processFacts(input.pid, userName, btime);
      if (!facts) {
        throw new DiagError("E_INVALID_INPUT", `no process with pid ${input.pid} (it is not running)`, {
          hint: 'look it up by name instead, e.g. {"name":"nginx"}',
        });
      }
      return { processes: [shown(facts)], truncated: false, omitted: 0 };
    }
    const matches: number[] = [];
    const pids = listPids();
    for (let i = 0; i < pids.length && !ctx.signal.aborted; i++) {
      if (i > 0 && i % PIDS_PER_TURN === 0) await nextTurn();
      const pid = pids[i] as number;
      if (processName(pid) === input.name || programName(pid) === input.name) matches.push(pid);
    }
    const { items, omitted } = capList(matches, input.limit);
    const processes: ProcessFacts[] = [];
    for (const pid of items) {
      if (processes.length % 4 === 3) await nextTurn();
      const facts = processFacts(pid, userName, btime);
      if (facts) processes.push(facts);
    }
    return { processes: processes.map(shown), truncated: omitted > 0, omitted };
  },
});
