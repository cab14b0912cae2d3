// The baseline "bare framework" server: Fastify + zod and nothing of ours, bundled by scripts/bench/bare-bundle.ts
// the way `pnpm build` bundles a server (esbuild ESM, the same banner and compile-cache launcher). Config from env
// through a zod schema, one /healthz and one POST route whose body zod validates: what any Fastify + zod
// service does at start-up and per request.
import Fastify from "fastify";
import { z } from "zod";

const config = z
  .object({ HOST: z.string().default("127.0.0.1"), PORT: z.coerce.number().int().min(0).max(65535).default(0) })
  .parse(process.env);
const input = z.object({ name: z.string().max(64).default("x"), limit: z.number().int().min(1).max(100).default(10) });

const app = Fastify();
app.get("/healthz", async () => ({ ok: true, name: "bare", version: "0.0.0" }));
app.post("/actions/echo", async (request) => ({ ...input.parse(request.body ?? {}), ok: true }));
// Not awaited at the top, so the same file also builds as CommonJS (bare-bundle.ts, buildBareAsServer).
// A graceful stop, as any service has (and the exit at which a launcher writes its code cache).
process.once("SIGTERM", () => app.close().then(() => process.exit(0)));
app.listen({ host: config.HOST, port: config.PORT }).then((address) => {
  process.stdout.write(`${JSON.stringify({ msg: "listening", url: address })}\n`);
});
