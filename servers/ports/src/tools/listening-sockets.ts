/** listening_sockets: every listening TCP and bound UDP socket in this namespace, with the process holding it. */
import { capList, limitInput, truncationFields } from "@roadnerd/conventions";
import { z } from "zod";
import { defineTool } from "../kit.ts";
import { readListeners, ssListening } from "../listeners.ts";
import { ownNetns } from "../proc/netns.ts";
import { processName } from "../proc/process-facts.ts";
import { localField, netnsField, protoField, sourceField } from "../schemas.ts";

const socket = z.object({
  proto: protoField,
  local: localField,
  port: z.number().int().describe("local port"),
  pid: z.number().int().nullable().describe("lowest pid holding the socket; null when no process in view holds it"),
  process: z.string().nullable().describe("that process's name (comm), null with pid"),
  holders: z.number().int().describe("how many processes hold the socket (forked workers share one)"),
});

export const listeningSockets = defineTool({
  name: "listening_sockets",
  summary: "Every listening TCP/UDP socket with the process holding it.",
  input: {
    proto: z.enum(["tcp", "udp"]).optional().describe("only TCP or only UDP (default both)"),
    limit: limitInput,
  },
  output: {
    sockets: z.array(socket).describe("sorted by port, then proto"),
    netns: netnsField,
    source: sourceField,
    ...truncationFields,
  },
  example: {},
  commands: [ssListening],
  view: (r) => ({
    ports: r.sockets.map((s) => `${s.port}/${s.proto} ${s.process ?? "?"}`),
    total: r.sockets.length + r.omitted,
  }),
  summarize: (r) => {
    const total = r.sockets.length + r.omitted;
    if (total === 0) return "nothing listens in this network namespace";
    const shown = r.sockets
      .slice(0, 6)
      .map((s) => `${s.port}/${s.proto} ${s.process ?? "?"}`)
      .join(", ");
    return `${total} listening socket${total === 1 ? "" : "s"}: ${shown}${total > 6 ? ", …" : ""}`;
  },
  async handler(input, ctx) {
    const snap = await readListeners(ctx);
    const wanted = snap.listeners.filter((l) => !input.proto || l.proto.startsWith(input.proto));
    const { items, omitted } = capList(wanted, input.limit);
    const names = new Map<number, string | null>();
    const sockets = items.map((l) => {
      const pid = l.pids[0] ?? null;
      if (pid !== null && !names.has(pid)) names.set(pid, processName(pid));
      return {
        proto: l.proto,
        local: l.local,
        port: l.port,
        pid,
        process: pid === null ? null : (names.get(pid) ?? null),
        holders: l.pids.length,
      };
    });
    return { sockets, netns: ownNetns(), source: snap.source, truncated: omitted > 0, omitted };
  },
});
