/** tcp_port_check: can a TCP connection be opened to host:port? Open, refused, filtered, unreachable, unresolved. */
import {
  classifySocketError,
  type DialAttempt,
  DialError,
  dial,
  hostField,
  hostPort,
  portField,
  type SocketFailureKind,
} from "@roadnerd/conventions";
import { z } from "zod";
import { defineTool } from "../kit.ts";

const STATES = ["open", "refused", "filtered", "unreachable", "unresolved", "error"] as const;
type State = (typeof STATES)[number];

/** The kernel's socket-failure kinds as this tool's states. */
const STATE_OF: Record<SocketFailureKind, Exclude<State, "open" | "unresolved">> = {
  refused: "refused",
  closed: "refused",
  timeout: "filtered",
  unreachable: "unreachable",
  dns: "error",
  tls: "error",
  other: "error",
};

/** The closed set's codes, as the kernel's socket-error boundary uses them; `detail` says which OS error. */
const ERROR_OF: Record<Exclude<State, "open" | "unresolved">, "E_CONN_REFUSED" | "E_UNREACHABLE" | "E_TIMEOUT"> = {
  refused: "E_CONN_REFUSED",
  filtered: "E_TIMEOUT",
  unreachable: "E_UNREACHABLE",
  error: "E_CONN_REFUSED",
};

/** One address tried, as this tool's state: refused, filtered (nothing answered in its share), unreachable… */
function stateOf(attempt: DialAttempt, port: number): { state: Exclude<State, "open" | "unresolved">; detail: string } {
  const at = `address ${hostPort(attempt.address, port)}`;
  // Our share of the time ran out, or the call's own deadline (the caller went away): either way nothing answered.
  if (attempt.gaveUp) {
    return {
      state: "filtered",
      detail: `filtered: no answer within ${attempt.limitMs ?? Math.round(attempt.ms)} ms (${at})`,
    };
  }
  const failure = attempt.failure ?? classifySocketError(undefined, true);
  const state = STATE_OF[failure.kind];
  const why = state === "filtered" ? "filtered: no answer" : state === "error" ? "connect failed" : failure.reason;
  return { state, detail: `${why} (${failure.errno}, ${at})` };
}

export const tcpPortCheck = defineTool({
  name: "tcp_port_check",
  summary: "TCP connect to host:port: open, refused, filtered or unresolved.",
  input: {
    host: hostField.describe("host name or IP, e.g. example.com or 192.0.2.10"),
    port: portField,
  },
  output: {
    host: z.string().describe("host as asked"),
    port: portField.describe("port as asked"),
    open: z.boolean().describe("true when the TCP handshake completed"),
    state: z
      .enum(STATES)
      .describe("open | refused (closed port) | filtered (no answer) | unreachable (no route) | unresolved (DNS)"),
    address: z.string().optional().describe("the IP actually tried"),
    connect_ms: z.number().int().min(0).optional().describe("ms until the answer (handshake, refusal or ICMP)"),
    error: z
      .enum(["E_CONN_REFUSED", "E_UNREACHABLE", "E_TIMEOUT", "E_DNS_FAIL"])
      .optional()
      .describe("error code when not open"),
    detail: z.string().optional().describe("what exactly happened, e.g. filtered: no answer within 1900 ms"),
  },
  example: { host: "example.com", port: 443 },
  openWorld: true,
  targets: { host: "host" },
  view: (r) => ({ open: r.open, state: r.state, address: r.address, error: r.error, detail: r.detail }),
  summarize: (r) => {
    const target = hostPort(r.host, r.port);
    if (r.open)
      return `${target} is open (${r.connect_ms} ms${r.address && r.address !== r.host ? `, ${r.address}` : ""})`;
    if (r.state === "refused") return `${target} is closed: connection refused`;
    if (r.state === "unresolved") return r.detail ?? `${r.host} did not resolve`;
    if (r.state === "filtered")
      return `${target} filtered: no answer in time (a firewall drops it, or the host is down)`;
    return `${target} ${r.state}: ${r.detail ?? "no detail"}`;
  },
  async handler(input, ctx) {
    const { host, port } = input;
    try {
      // Each address the name resolved to, in turn, as a client would try them (`localhost` is ::1 first, and a
      // service on 127.0.0.1 only is still open), each with its share of the time left. Every address is checked
      // on this port too: a server is never aimed at itself.
      const dialed = await dial(ctx.outbound, { host, port, signal: ctx.signal, timeoutMs: ctx.budget() });
      dialed.socket.destroy();
      const ms = dialed.attempts.at(-1)?.ms ?? dialed.timing.connect;
      return { host, port, open: true, state: "open" as const, address: dialed.address, connect_ms: Math.round(ms) };
    } catch (err) {
      if (!(err instanceof DialError)) throw err;
      const last = err.attempts.at(-1);
      // A name that does not resolve (or not in time) is the diagnosis; a denied target stays an error.
      if (err.phase === "dns" || !last) {
        return {
          host,
          port,
          open: false,
          state: "unresolved" as const,
          error: "E_DNS_FAIL" as const,
          detail:
            err.code === "E_TIMEOUT" ? `${host} did not resolve in time (timeout ${ctx.timeoutMs} ms)` : err.message,
        };
      }
      const { state, detail } = stateOf(last, port);
      const tried = err.attempts.map((a) => a.address);
      const others = tried.length > 1 ? `; also tried ${tried.slice(0, -1).join(", ")}` : "";
      return {
        host,
        port,
        open: false,
        state,
        address: last.address,
        // A filtered port's time is just our timeout: not a measurement.
        connect_ms: state === "filtered" ? undefined : Math.round(last.ms),
        error: ERROR_OF[state],
        detail: `${detail}${others}`,
      };
    }
  },
});
