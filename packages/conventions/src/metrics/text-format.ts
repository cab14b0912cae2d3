/**
 * Prometheus's text exposition (0.0.4) of a few series, written the way prom-client writes them (same escaping,
 * same order, `le` first on buckets) so a scrape reads the same as before prom-client became lazy (ADR 0049).
 */
export interface Sample {
  /** Appended to the series name: `_bucket`, `_sum`, `_count` of a histogram. */
  readonly suffix?: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Series {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "gauge" | "histogram";
  readonly samples: readonly Sample[];
}

const escapeText = (s: string) => s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
const escapeValue = (s: string) => escapeText(s).replace(/"/g, '\\"');
const number = (v: number) => (Number.isNaN(v) ? "Nan" : v === Infinity ? "+Inf" : v === -Infinity ? "-Inf" : `${v}`);

/** The series joined by blank lines, without the final newline. */
export function seriesText(series: readonly Series[]): string {
  return series
    .map((s) => {
      const lines = [`# HELP ${escapeText(s.name)} ${escapeText(s.help)}`, `# TYPE ${escapeText(s.name)} ${s.type}`];
      for (const { suffix = "", labels, value } of s.samples) {
        const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeValue(v)}"`);
        lines.push(`${s.name}${suffix}${parts.length ? `{${parts.join(",")}}` : ""} ${number(value)}`);
      }
      return lines.join("\n");
    })
    .join("\n\n");
}
