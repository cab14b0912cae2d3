/**
 * who_uses_port: which processes listen on a port (TCP or UDP, IPv4 or IPv6), each with its command line,
 * executable, user and systemd unit: "8080 is held by java of jenkins.service" in one call. A port nobody
 * holds is a result (`in_use: false`), and so is one held by a socket whose process we cannot see.
 */
import { nextField, portField } from "@roadnerd/conventions";
import { z } from "zod";
import { defineTool } from "../kit.ts";
import { readListeners, ssListening } from "../listeners.ts";
import { ownNetns } from "../proc/netns.ts";
import { userNames } from "../proc/passwd.ts";
import { bootTime, processFacts } from "../proc/process-facts.ts";
import { THREAD_SEARCH_LINKS } from "../proc/socket-owners.ts";
import { cmdField, netnsField, pidField, socketRef, sourceField, unitField } from "../schemas.ts";

const holder = z.object({
  pid: pidField,
  process: z.string().describe("process name (comm)"),
  cmd: cmdField,
  exe: z.string().nullable().describe("executable (/proc/<pid>/exe); null when it cannot be read"),
  unit: unitField,
  user: z.string().describe("user the process runs as"),
  sockets: z.array(socketRef).describe("its listening sockets on this port"),
});

/** Why a listener has no holder we can name. */
export function unownedNote(unreadable: number | null, searchCut = false): string {
  if (searchCut) {
    return `no process this server looked at holds it: the search of threads with files of their own stopped at its bound (${THREAD_SEARCH_LINKS} descriptors) first, so one of those may (or it is in flight between processes)`;
  }
  if (unreadable && unreadable > 0) {
    return `no visible process holds it; ${unreadable} processes' file descriptors are unreadable to this server (not root): the holder is likely one of them`;
  }
  return "no process this server can see holds it: it belongs to a process in another PID namespace (a container) or hidden from this user (/proc mounted with hidepid), to the kernel, or is in flight between processes";
}

export const whoUsesPort = defineTool({
  name: "who_uses_port",
  summary: "Which process listens on a port: pid, command, systemd unit.",
  input: { port: portField.describe("port to look up, 1-65535") },
  output: {
    port: z.number().int().describe("port as asked"),
    in_use: z.boolean().describe("something listens on (or is bound to) the port in this network namespace"),
    pids: z.array(holder).describe("processes holding a listening (or bound) socket on the port, by pid"),
    unowned: z.array(socketRef).describe("listening sockets on the port that no visible process holds"),
    note: z.string().nullable().describe("why some sockets have no process, when unowned is not empty"),
    connections: z
      .record(z.string(), z.number().int())
      .nullable()
      .describe(
        "TCP connections using the port locally, by state (established, time_wait…); TIME_WAIT ones can make a bind fail; null when ss answered",
      ),
    netns: netnsField,
    source: sourceField,
    next: nextField,
  },
  example: { port: 8080 },
  commands: [ssListening],
  view: (r) => ({
    in_use: r.in_use,
    holders: r.pids.map((p) => `${p.process} pid ${p.pid}${p.unit ? ` ${p.unit}` : ""}`),
    unowned: r.unowned.length || undefined,
    time_wait: r.connections?.time_wait,
  }),
  summarize: (r) => {
    if (!r.in_use) {
      const tw = r.connections?.time_wait ?? 0;
      const lingering =
        tw > 0
          ? `; ${tw} connection(s) in TIME_WAIT still use it (a bind without SO_REUSEADDR fails until they expire)`
          : "";
      return `nothing listens on port ${r.port} in this network namespace${lingering}`;
    }
    const held = r.pids.map((p) => {
      const where = p.sockets.map((s) => `${s.proto} ${s.local}${s.bound ? " (bound, not listening)" : ""}`).join(", ");
      return `${p.process} (pid ${p.pid}${p.unit ? `, ${p.unit}` : ""}) on ${where}`;
    });
    if (r.unowned.length > 0) held.push(`${r.unowned.length} socket(s) whose process is not visible`);
    return `port ${r.port} is held by ${held.join("; ")}`;
  },
  async handler(input, ctx) {
    const snap = await readListeners(ctx, input.port);
    const btime = bootTime();
    const userName = ctx.use(userNames);
    const byPid = new Map<number, z.input<typeof holder>>();
    const unowned: Array<z.input<typeof socketRef>> = [];
    for (const l of snap.listeners) {
      const ref = { proto: l.proto, local: l.local, ...(l.bound ? { bound: true as const } : {}) };
      let seen = false;
      for (const pid of l.pids) {
        const known = byPid.get(pid);
        if (known) {
          known.sockets.push(ref);
          seen = true;
          continue;
        }
        const facts = processFacts(pid, userName, btime);
        if (!facts) continue; // Exited since the scan.
        byPid.set(pid, {
          pid,
          process: facts.name,
          cmd: facts.cmd,
          exe: facts.exe,
          unit: facts.unit,
          user: facts.user,
          sockets: [ref],
        });
        seen = true;
      }
      if (!seen) unowned.push(ref);
    }
    const pids = [...byPid.values()].sort((a, b) => a.pid - b.pid);
    // A holder systemd runs: its unit's state (restarts, since when) is what to look at next.
    const unit = pids.find((p) => p.unit)?.unit;
    return {
      port: input.port,
      in_use: snap.listeners.length > 0,
      pids,
      unowned,
      note: unowned.length > 0 ? unownedNote(snap.unreadable, snap.searchCut) : null,
      connections: snap.connections,
      netns: ownNetns(),
      source: snap.source,
      ...(unit
        ? { next: { tool: "service/service_status", args: { name: unit }, why: `${unit} holds port ${input.port}` } }
        : {}),
    };
  },
});
