/** tcp_port_check: can a TCP connection be opened to host:port? Open, refused, filtered, unreachable, unresolved. */
import { connect } from "node:net";
import {
  classifySocketError,
  DiagError,
  hostField,
  hostPort,
  portField,
  type SocketFailureKind,
  type ToolContext,
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

interface Probe {
  state: Exclude<State, "unresolved">;
  ms: number;
  detail: string | undefined;
}

/** One connection attempt to a pinned IP; the socket is destroyed whatever happens. */
function probe(address: string, port: number, waitMs: number, signal: AbortSignal): Promise<Probe> {
  const at = `address ${hostPort(address, port)}`;
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect({ host: address, port });
    // After we settle, late events must not become unhandled errors.
    socket.on("error", () => {});
    const finish = (state: Probe["state"], detail?: string) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      socket.destroy();
      resolve({ state, ms: Math.round(performance.now() - started), detail });
    };
    // Our deadline, or the call's own (the caller went away): either way nothing answered.
    const onAbort = () => finish("filtered", `filtered: no answer within ${waitMs} ms (${at})`);
    const timer = setTimeout(onAbort, waitMs);
    signal.addEventListener("abort", onAbort, { once: true });
    socket.once("connect", () => finish("open"));
    socket.once("error", (err: NodeJS.ErrnoException) => {
      const failure = classifySocketError(err.code, true);
      const state = STATE_OF[failure.kind];
      const why = state === "filtered" ? "filtered: no answer" : state === "error" ? "connect failed" : failure.reason;
      return finish(state, `${why} (${failure.errno}, ${at})`);
    });
  });
}

async function resolve(host: string, port: number, ctx: ToolContext) {
  try {
    // Every address is checked on this port too: a server is never aimed at itself.
    return await ctx.outbound.resolveTarget(host, ctx.signal, port);
  } catch (err) {
    // A name that does not resolve (or not in time) is the diagnosis; a denied target stays an error.
    if (err instanceof DiagError && (err.code === "E_DNS_FAIL" || err.code === "E_TIMEOUT")) return err;
    throw err;
  }
}

export const tcpPortCheck = defineTool({
  name: "tcp_port_check",
  summary: "Try a TCP connection to host:port: open, refused, filtered (no answer), unreachable or unresolved.",
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
    const target = await resolve(host, port, ctx);
    if (target instanceof DiagError) {
      return {
        host,
        port,
        open: false,
        state: "unresolved" as const,
        error: "E_DNS_FAIL" as const,
        detail:
          target.code === "E_TIMEOUT"
            ? `${host} did not resolve in time (timeout ${ctx.timeoutMs} ms)`
            : target.message,
      };
    }
    // Each address the name resolved to, in turn, as a client would try them: `localhost` is ::1 first, and a
    // service on 127.0.0.1 only is still open.
    const tried: string[] = [];
    let result: (Probe & { address: string }) | undefined;
    for (const [i, address] of target.addresses.entries()) {
      // What is left is shared by the addresses still to try; the last one gets all of it.
      const waitMs = Math.max(1, Math.floor(ctx.budget() / (target.addresses.length - i)));
      const attempt = await probe(address, port, waitMs, ctx.signal);
      tried.push(address);
      result = { ...attempt, address };
      if (attempt.state === "open" || ctx.signal.aborted) break;
    }
    const { state, ms, detail, address } = result as Probe & { address: string };
    const others = tried.length > 1 && state !== "open" ? `; also tried ${tried.slice(0, -1).join(", ")}` : "";
    return {
      host,
      port,
      open: state === "open",
      state,
      address,
      // A filtered port's time is just our timeout: not a measurement.
      connect_ms: state === "filtered" ? undefined : ms,
      error: state === "open" ? undefined : ERROR_OF[state],
      detail: detail === undefined ? undefined : `${detail}${others}`,
    };
  },
});
