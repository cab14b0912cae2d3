/**
 * A server's Prometheus metrics (prom-client), one registry per runtime so two servers in one process never mix
 * their series. Updating is a counter increment or a histogram observe on the call's own path; everything a
 * scrape reads from the bounds (running, queued, open) is read at scrape time, so a scrape takes no slot and
 * waits on no call. Process metrics are registered on the first scrape: a runtime nobody scrapes pays nothing.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { ErrorCode } from "../errors/errors.ts";
import type { BoundState } from "../runtime/limiter.ts";
import type { RefusalReason } from "./refusal-reason.ts";

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
  const registry = new Registry();
  const registers = [registry];
  const calls = new Counter({
    name: "roadnerd_tool_calls_total",
    help: "Tool calls answered, by tool and outcome (ok or the error code)",
    labelNames: ["tool", "code"] as const,
    registers,
  });
  const duration = new Histogram({
    name: "roadnerd_tool_call_duration_seconds",
    help: "Time from a call's arrival to its answer, by tool",
    labelNames: ["tool"] as const,
    buckets: CALL_BUCKETS,
    registers,
  });
  const refusals = new Counter({
    name: "roadnerd_bound_refusals_total",
    help: "Callers turned away at a bound (503 E_BUSY), by bound",
    labelNames: ["bound"] as const,
    registers,
  });
  const outbound = new Counter({
    name: "roadnerd_outbound_refusals_total",
    help: "Targets the outbound policy refused, by reason",
    labelNames: ["reason"] as const,
    registers,
  });
  const probes = new Counter({
    name: "roadnerd_probes_total",
    help: "Probes answered on /probe, by module and result",
    labelNames: ["module", "success"] as const,
    registers,
  });
  const info = new Gauge({
    name: "roadnerd_server_info",
    help: "This server's name and version (always 1)",
    labelNames: ["server", "version"] as const,
    registers,
  });
  info.set({ server: sources.server, version: sources.version }, 1);
  const limiterGauge = (name: string, help: string, read: (b: Record<BoundName, BoundState>) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read(sources.bounds()));
      },
    });
  limiterGauge("roadnerd_tool_calls_running", "Tool executions running now", (b) => b.tool_calls.active);
  limiterGauge("roadnerd_streams_open", "SSE streams open now", (b) => b.streams.active);
  limiterGauge("roadnerd_subprocesses_running", "Subprocesses running now", (b) => b.subprocesses.active);
  limiterGauge("roadnerd_subprocesses_queued", "Subprocesses waiting for a slot", (b) => b.subprocesses.waiting);
  new Gauge({
    name: "roadnerd_bound_limit",
    help: "Each bound's limit (MAX_CALLS, MAX_STREAMS, MAX_PROCS)",
    labelNames: ["bound"] as const,
    registers,
    collect() {
      for (const [bound, limiter] of Object.entries(sources.bounds())) this.set({ bound }, limiter.max);
    },
  });
  let processMetrics = false;
  return {
    contentType: registry.contentType,
    observeCall(tool, code, seconds) {
      calls.inc({ tool, code });
      duration.observe({ tool }, seconds);
    },
    refused: (bound) => refusals.inc({ bound }),
    outboundRefused: (reason) => outbound.inc({ reason }),
    probed: (module, success) => probes.inc({ module, success: success ? "1" : "0" }),
    render() {
      if (!processMetrics) {
        processMetrics = true;
        collectDefaultMetrics({ register: registry });
      }
      return registry.metrics();
    },
  };
}
