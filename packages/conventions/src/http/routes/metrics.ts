/**
 * GET /metrics: the runtime's Prometheus series in the text format, behind the same guards as every route (a
 * token when AUTH_TOKEN is set: Prometheus sends it with `authorization: { credentials: … }`). A scrape takes no
 * call slot: it reads counters and the bounds' current counts.
 */
import type { FastifyInstance } from "fastify";
import type { Runtime } from "../../runtime/runtime.ts";

export function registerMetrics(app: FastifyInstance, runtime: Runtime<unknown>): void {
  app.get("/metrics", async (_request, reply) => {
    const text = await runtime.metrics.render();
    return reply.type(runtime.metrics.contentType).send(text);
  });
}
