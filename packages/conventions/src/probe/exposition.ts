/** One probe's series in Prometheus's text format, through a registry made for this answer (as blackbox does). */
import { Gauge, Registry } from "prom-client";
import type { ProbeSeries } from "./prober.ts";

export const PROBE_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

export function renderProbe(series: readonly ProbeSeries[]): Promise<string> {
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
