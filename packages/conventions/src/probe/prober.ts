/**
 * A prober in blackbox_exporter's shape (its `prober/<proto>.go` behind one ProbeFn): given a target and its
 * module's options, probe once within the deadline and say whether it succeeded and which series it measured.
 * `probe_success` and `probe_duration_seconds` are the route's; a prober adds the rest. Probers reach targets only
 * through `ctx.outbound` (the kernel's dial and HTTP probe) or by calling the server's own tools (`ctx.call`).
 */
import type { z } from "zod";
import type { AnyTool, ResultOf } from "../define/tool.ts";
import type { OutboundPolicy } from "../outbound/policy.ts";
import type { Logger } from "../runtime/logger.ts";

export interface ProbeSeries {
  name: string;
  help: string;
  value: number;
  labels?: Readonly<Record<string, string>>;
}

export interface ProbeOutcome {
  success: boolean;
  series: ProbeSeries[];
}

export interface ProbeContext {
  outbound: OutboundPolicy;
  /** Aborts at the module's deadline or when the scraper goes away. */
  signal: AbortSignal;
  /** ms left before the deadline (at least 1). */
  remaining(): number;
  log: Logger;
  /** One of this server's tools, through the same path as every surface (bounds, policy, metrics). */
  call<T extends AnyTool>(tool: T, input: Record<string, unknown>): Promise<ResultOf<T>>;
}

export interface ProberSpec<S extends z.ZodType<Record<string, unknown>>> {
  /** The `prober:` value a module names, e.g. http, tcp, dns. */
  name: string;
  /** The options under the module's key of the same name (`http:`, `tcp:`…), strict. */
  options: S;
  /** Modules served when no PROBE_CONFIG is given: name → options. */
  defaults: Readonly<Record<string, z.input<S>>>;
  run(target: string, options: z.output<S>, ctx: ProbeContext): Promise<ProbeOutcome>;
}

/** A prober with its options' type closed over: the route hands it raw options, it parses them itself. */
export interface Prober {
  name: string;
  defaults: Readonly<Record<string, unknown>>;
  /** Check a module's options (at start-up); throws the schema's error. */
  parseOptions(raw: unknown): unknown;
  run(target: string, raw: unknown, ctx: ProbeContext): Promise<ProbeOutcome>;
}

export function defineProber<S extends z.ZodType<Record<string, unknown>>>(spec: ProberSpec<S>): Prober {
  return {
    name: spec.name,
    defaults: spec.defaults,
    parseOptions: (raw) => spec.options.parse(raw ?? {}),
    run: (target, raw, ctx) => spec.run(target, spec.options.parse(raw ?? {}), ctx),
  };
}
