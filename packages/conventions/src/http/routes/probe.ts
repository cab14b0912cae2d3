/**
 * GET /probe?module=<name>&target=<target> on a server that declares probers: blackbox_exporter's endpoint, so a
 * Prometheus job written for it (relabel the target into `target`, point `__address__` here) works unchanged.
 * Modules come from PROBE_CONFIG (or the probers' defaults), loaded when the app is built: a bad file stops the
 * server. Behind the same guards as every route.
 */
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { DiagError } from "../../errors/errors.ts";
import { PROBE_CONTENT_TYPE, renderProbe } from "../../probe/exposition.ts";
import { loadProbeModules, probeEnv } from "../../probe/modules.ts";
import { probeTimeoutMs, runProbe } from "../../probe/run-probe.ts";
import type { Runtime } from "../../runtime/runtime.ts";
import { callerGone } from "../caller-gone.ts";
import { callerKey } from "../caller-key.ts";

const query = z.object({
  module: z.string().min(1).max(64),
  target: z.string().min(1).max(2048),
});

export async function registerProbe(app: FastifyInstance, runtime: Runtime<unknown>): Promise<void> {
  const { probers } = runtime.def;
  if (probers.length === 0) return;
  const { PROBE_CONFIG } = z.object(probeEnv).parse(runtime.config);
  const modules = await loadProbeModules(probers, PROBE_CONFIG);
  const known = [...modules.keys()].join(", ");
  app.get("/probe", async (request, reply) => {
    const asked = query.safeParse(request.query);
    if (!asked.success) {
      throw new DiagError("E_INVALID_INPUT", "/probe needs module and target", {
        hint: `e.g. /probe?module=${modules.keys().next().value ?? "http_2xx"}&target=example.com (modules: ${known})`,
      });
    }
    const module = modules.get(asked.data.module);
    if (!module) {
      throw new DiagError("E_INVALID_INPUT", `unknown module ${asked.data.module}`, { hint: `modules: ${known}` });
    }
    const scrape = request.headers["x-prometheus-scrape-timeout-seconds"];
    const timeoutMs = probeTimeoutMs(module, typeof scrape === "string" ? scrape : undefined);
    // The scraper's own key: probes share the call slots per caller like every call (ADR 0046).
    const caller = await callerKey(request.raw.socket, request.headers);
    const series = await runProbe(runtime, module, asked.data.target, timeoutMs, callerGone(reply), caller);
    return reply.type(PROBE_CONTENT_TYPE).send(await renderProbe(series));
  });
}
