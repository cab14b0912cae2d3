/**
 * port_watch: a message when a listener on the port appears or disappears (or is replaced), the first one
 * being the current state. Each round asks only for the port's listening sockets (cheap); the holders are
 * looked up (the /proc/<pid>/fd scan) only when the set of sockets changed. A message lists at most `limit`
 * of them (SO_REUSEPORT or one bind per address can put thousands on a port): the rest are counted.
 */
import { capList, DiagError, limitInput, portField, truncationFields } from "@roadnerd/conventions";
import { z } from "zod";
import { defineStream } from "../kit.ts";
import { type Listener, type ListenerSnapshot, listenersFromTables, readListeners, ssListening } from "../listeners.ts";
import { userNames } from "../proc/passwd.ts";
import { processFacts } from "../proc/process-facts.ts";
import { cmdField, localField, protoField } from "../schemas.ts";

const DEFAULT_INTERVAL_MS = 1000;

const listener = z.object({
  proto: protoField,
  local: localField,
  pid: z.number().int().nullable().describe("lowest pid holding it; null when no visible process does"),
  process: z.string().nullable().describe("its name (comm)"),
  cmd: cmdField.nullable(),
});

const key = (ls: readonly Listener[]) =>
  ls
    .map((l) => `${l.proto} ${l.local} ${l.inode ?? ""} ${l.inode === null ? l.pids.join(",") : ""}`)
    .sort()
    .join("|");

export const portWatch = defineStream({
  name: "port_watch",
  summary: "Watch a port: a message when a listener on it appears or disappears; the first is the current state.",
  input: {
    port: portField.describe("port to watch, 1-65535"),
    interval_ms: z
      .number()
      .int()
      .min(100)
      .max(60_000)
      .optional()
      .describe(`ms between looks (default ${DEFAULT_INTERVAL_MS})`),
    limit: limitInput,
  },
  message: {
    change: z
      .enum(["initial", "appeared", "disappeared", "changed"])
      .describe("initial: the state when the watch began; changed: still listening, other sockets or holders"),
    listening: z.boolean().describe("something listens on the port now"),
    listeners: z.array(listener).describe("its listening sockets now, at most `limit`"),
    ...truncationFields,
  },
  example: { port: 8080 },
  commands: [ssListening],
  summarize: (m) => {
    if (!m.listening) return m.change === "initial" ? "nothing listens on the port" : "the listener went away";
    const who = [...new Set(m.listeners.map((l) => (l.pid ? `${l.process} (pid ${l.pid})` : "an unseen process")))];
    const verb = m.change === "initial" ? "listening" : m.change;
    const more = m.omitted > 0 ? ` and ${m.omitted} more` : "";
    return `${verb}: ${m.listeners.map((l) => `${l.proto} ${l.local}`).join(", ")}${more} by ${who.join(", ")}`;
  },
  async run(input, ctx) {
    const interval = input.interval_ms ?? DEFAULT_INTERVAL_MS;
    const userName = ctx.use(userNames);
    let tablesReadable = ctx.config.SOCKETS_SOURCE !== "ss";
    let last: string | undefined;
    let wasListening = false;
    /** This round's listeners: the tables alone when readable (holders are looked up only on a change). */
    const look = async (): Promise<{ now: Listener[]; full?: ListenerSnapshot }> => {
      if (tablesReadable) {
        try {
          return { now: await listenersFromTables(ctx, input.port) };
        } catch (err) {
          if (err instanceof DiagError || ctx.config.SOCKETS_SOURCE === "proc" || ctx.signal.aborted) throw err;
          tablesReadable = false;
        }
      }
      const full = await readListeners(ctx, input.port);
      return { now: full.listeners, full };
    };
    // Bounded: the stream's duration ends it; the round cap is a second guard.
    for (let round = 0; round < 1_000_000; round++) {
      let message: Parameters<typeof ctx.emit>[0] | undefined;
      try {
        const { now, full: seen } = await look();
        const k = key(now);
        if (k !== last) {
          const full = seen ?? (await readListeners(ctx, input.port));
          const listening = full.listeners.length > 0;
          const change =
            last === undefined
              ? "initial"
              : listening === wasListening
                ? "changed"
                : listening
                  ? "appeared"
                  : "disappeared";
          last = seen ? k : key(full.listeners.map((l) => ({ ...l, pids: [] })));
          wasListening = listening;
          // Facts (a /proc read each) only for the listeners the message carries.
          const { items, omitted } = capList(full.listeners, input.limit);
          const listeners = items.map((l) => {
            const pid = l.pids[0] ?? null;
            const facts = pid === null ? null : processFacts(pid, userName);
            return { proto: l.proto, local: l.local, pid, process: facts?.name ?? null, cmd: facts?.cmd ?? null };
          });
          message = { change, listening, listeners, truncated: omitted > 0, omitted };
        }
      } catch (err) {
        // The duration ended or the client left mid-round: nothing to report.
        if (ctx.signal.aborted) return;
        throw err;
      }
      if (message && !(await ctx.emit(message))) return;
      if (!(await ctx.sleep(interval))) return;
    }
  },
});
