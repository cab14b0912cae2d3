/**
 * Probe modules from a file shaped like blackbox_exporter's (`modules: { http_2xx: { prober: http, timeout: 5s,
 * http: {…} } }`, YAML or JSON), checked once at start-up against each prober's own options; without a file, the
 * probers' defaults. A module naming an unknown prober, or options its prober refuses, stops the server.
 */
import { z } from "zod";
import { MAX_TIMEOUT_MS } from "../define/fields.ts";
import { DiagError } from "../errors/errors.ts";
import type { Prober } from "./prober.ts";

/** A probe's deadline when neither its module nor the scraper says one (blackbox's default scrape timeout is 10 s). */
export const DEFAULT_PROBE_TIMEOUT_MS = 5_000;

/** Env var of a probing server: the module file. */
export const probeEnv = {
  PROBE_CONFIG: z
    .string()
    .min(1)
    .optional()
    .describe("blackbox-style module file (YAML or JSON) for GET /probe; default: the built-in modules"),
};

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };
const duration = z
  .string()
  .regex(/^\d+(\.\d+)?(ms|s|m)$/, "a duration such as 500ms, 5s or 1m")
  .transform((v) => {
    const [, n = "0", unit = "s"] = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(v) ?? [];
    return Math.round(Number(n) * (UNITS[unit] ?? 1000));
  })
  .pipe(z.number().int().min(1).max(MAX_TIMEOUT_MS));

const moduleSchema = z.looseObject({ prober: z.string().min(1), timeout: duration.optional() });
const fileSchema = z.object({ modules: z.record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/), moduleSchema) });

export interface ProbeModule {
  name: string;
  prober: Prober;
  timeoutMs: number | undefined;
  options: unknown;
}

function bad(message: string): DiagError {
  return new DiagError("E_INVALID_INPUT", `PROBE_CONFIG: ${message}`);
}

export async function loadProbeModules(
  probers: readonly Prober[],
  file: string | undefined,
): Promise<Map<string, ProbeModule>> {
  const byName = new Map(probers.map((p) => [p.name, p]));
  const modules = new Map<string, ProbeModule>();
  if (file === undefined) {
    for (const prober of probers) {
      for (const [name, options] of Object.entries(prober.defaults)) {
        modules.set(name, { name, prober, timeoutMs: undefined, options: prober.parseOptions(options) });
      }
    }
    return modules;
  }
  let raw: unknown;
  try {
    // yaml only when a file names modules: nothing a server without PROBE_CONFIG loads at start (ADR 0049).
    // A split chunk of a CommonJS package exports only `default`.
    const [text, yaml] = await Promise.all([
      process.getBuiltinModule("node:fs/promises").readFile(file, "utf8"),
      import("yaml"),
    ]);
    raw = yaml.default.parse(text);
  } catch (err) {
    throw bad(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) throw bad(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  for (const [name, spec] of Object.entries(parsed.data.modules)) {
    const prober = byName.get(spec.prober);
    if (!prober) throw bad(`module ${name}: unknown prober ${spec.prober} (known: ${[...byName.keys()].join(", ")})`);
    let options: unknown;
    try {
      options = prober.parseOptions(spec[prober.name]);
    } catch (err) {
      const issues = err instanceof z.ZodError ? err.issues.map((i) => `${i.path.join(".")}: ${i.message}`) : [err];
      throw bad(`module ${name}: ${issues.join("; ")}`);
    }
    modules.set(name, { name, prober, timeoutMs: spec.timeout, options });
  }
  return modules;
}
