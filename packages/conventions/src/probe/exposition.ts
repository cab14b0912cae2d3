/** One probe's series in Prometheus's text format, through a registry made for this answer (as blackbox does). */
import type { ProbeSeries } from "./prober.ts";

/** prom-client's Registry.PROMETHEUS_CONTENT_TYPE: prom-client itself is loaded by the first probe (ADR 0049). */
export const PROBE_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export async function renderProbe(series: readonly ProbeSeries[]): Promise<string> {
  // `.default`: a bundle's split chunk of a CommonJS package exports only its module.exports.
  const { Gauge, Registry } = (await import("prom-client")).default;
  const registry = new Registry();
  const byName = new Map<string, ProbeSeries[]>();
  for (const s of series) byName.set(s.name, [...(byName.get(s.name) ?? []), s]);
  for (const [name, all] of byName) {
    const labelNames = [...new Set(all.flatMap((s) => Object.keys(s.labels ?? {})))];
    const gauge = new Gauge({ name, help: all[0]?.help ?? name, labelNames, registers: [registry] });
    for (const s of all) {
      if (s.labels) gauge.set(s.labels, s.value);
      else gauge.set(s.value);
    }
  }
  return registry.metrics();
}
