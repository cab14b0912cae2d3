/**
 * A server's Prometheus metrics, one set of series per runtime so two servers in one process never mix
 * their series. Updating is a counter increment or a histogram observe on the call's own path; everything a
 * scrape reads from the bounds (running, queued, open) is read at scrape time, so a scrape takes no slot and
 * waits on no call. Process metrics are registered on the first scrape: a runtime nobody scrapes pays nothing.
 */
import type { ErrorCode } from "../errors/errors.ts";
import type { BoundState } from "../runtime/limiter.ts";
import type { RefusalReason } from "./refusal-reason.ts";
import { type Series, seriesText } from "./text-format.ts";

/** prom-client's own constant: its module is only loaded for the process metrics, on the first scrape. */
const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Seconds: from a cached /proc read (ms) to a browser screenshot or a slow probe (tens of seconds). */
export const CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export type BoundName = "tool_calls" | "streams" | "subprocesses";

export interface Metrics {
  readonly contentType: string;
  /** One finished call: `code` is "ok" or the error code it ended with. */
  observeCall(tool: string, code: ErrorCode | "ok", seconds: number): void;
  /** A caller turned away at a bound (503 E_BUSY). */
  refused(bound: BoundName): void;
  /** A target the outbound policy refused. */
  outboundRefused(reason: RefusalReason): void;
  /** A /probe answered: its module and whether it succeeded. */
  probed(module: string, success: boolean): void;
  /** The text exposition of every series. */
  render(): Promise<string>;
}

export interface MetricsSources {
  server: string;
  version: string;
  bounds: () => Readonly<Record<BoundName, BoundState>>;
}

export function createMetrics(sources: MetricsSources): Metrics {
  // Our own series are plain maps rendered by text-format.ts: prom-client (~45 ms to load) is only imported by
  // the first scrape, for the process metrics (ADR 0049).
  const calls = new Map<string, number>();
  const duration = new Map<string, { buckets: number[]; sum: number; count: number }>();
  const refusals = new Map<string, number>();
  const outbound = new Map<string, number>();
  const probes = new Map<string, number>();
  const bump = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1);
  /** A counter whose map keys are its label values joined by NUL, in `labels` order. */
  const counter = (name: string, help: string, m: Map<string, number>, labels: readonly string[]): Series => ({
    name,
    help,
    type: "counter",
    samples: [...m].map(([key, value]) => {
      const values = key.split("\0");
      return { labels: Object.fromEntries(labels.map((label, i) => [label, values[i] ?? ""])), value };
    }),
  });
  let processRegistry: Promise<{ metrics(): Promise<string> }> | undefined;
  const ownSeries = (): Series[] => {
    const b = sources.bounds();
    const boundLimits = Object.entries(b).map(([bound, s]) => ({ labels: { bound }, value: s.max }));
    return [
      counter("roadnerd_tool_calls_total", "Tool calls answered, by tool and outcome (ok or the error code)", calls, [
        "tool",
        "code",
      ]),
      {
        name: "roadnerd_tool_call_duration_seconds",
        help: "Time from a call's arrival to its answer, by tool",
        type: "histogram",
        samples: [...duration].flatMap(([tool, h]) => [
          ...CALL_BUCKETS.map((le, i) => ({
            suffix: "_bucket",
            labels: { le: String(le), tool },
            value: h.buckets[i] ?? 0,
          })),
          { suffix: "_bucket", labels: { le: "+Inf", tool }, value: h.count },
          { suffix: "_sum", labels: { tool }, value: h.sum },
          { suffix: "_count", labels: { tool }, value: h.count },
        ]),
      },
      counter("roadnerd_bound_refusals_total", "Callers turned away at a bound (503 E_BUSY), by bound", refusals, [
        "bound",
      ]),
      counter("roadnerd_outbound_refusals_total", "Targets the outbound policy refused, by reason", outbound, [
        "reason",
      ]),
      counter("roadnerd_probes_total", "Probes answered on /probe, by module and result", probes, [
        "module",
        "success",
      ]),
      {
        name: "roadnerd_server_info",
        help: "This server's name and version (always 1)",
        type: "gauge",
        samples: [{ labels: { server: sources.server, version: sources.version }, value: 1 }],
      },
      gauge("roadnerd_tool_calls_running", "Tool executions running now", b.tool_calls.active),
      gauge("roadnerd_streams_open", "SSE streams open now", b.streams.active),
      gauge("roadnerd_subprocesses_running", "Subprocesses running now", b.subprocesses.active),
      gauge("roadnerd_subprocesses_queued", "Subprocesses waiting for a slot", b.subprocesses.waiting),
      {
        name: "roadnerd_bound_limit",
        help: "Each bound's limit (MAX_CALLS, MAX_STREAMS, MAX_PROCS)",
        type: "gauge",
        samples: boundLimits,
      },
    ];
  };
  return {
    contentType: CONTENT_TYPE,
    observeCall(tool, code, seconds) {
      bump(calls, `${tool}\0${code}`);
      let h = duration.get(tool);
      if (!h) {
        h = { buckets: CALL_BUCKETS.map(() => 0), sum: 0, count: 0 };
        duration.set(tool, h);
      }
      for (let i = 0; i < CALL_BUCKETS.length; i++)
        if (seconds <= (CALL_BUCKETS[i] ?? 0)) h.buckets[i] = (h.buckets[i] ?? 0) + 1;
      h.sum += seconds;
      h.count += 1;
    },
    refused: (bound) => bump(refusals, bound),
    outboundRefused: (reason) => bump(outbound, reason),
    probed: (module, success) => bump(probes, `${module}\0${success ? "1" : "0"}`),
    async render() {
      processRegistry ??= import("prom-client").then(({ default: { Registry, collectDefaultMetrics } }) => {
        const registry = new Registry();
        collectDefaultMetrics({ register: registry });
        return registry;
      });
      const own = seriesText(ownSeries());
      return `${own}\n\n${await (await processRegistry).metrics()}`;
    },
  };
}

const gauge = (name: string, help: string, value: number): Series => ({
  name,
  help,
  type: "gauge",
  samples: [{ labels: {}, value }],
});
