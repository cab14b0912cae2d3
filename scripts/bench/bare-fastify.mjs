// Baseline for the /healthz throughput and RSS figures: a bare Fastify app, same version, same host.
import { createRequire } from "node:module";

const require = createRequire(new URL("../../packages/conventions/package.json", import.meta.url));
const Fastify = require("fastify");
const app = Fastify();
app.get("/healthz", async () => ({ ok: true }));
const address = await app.listen({ host: "127.0.0.1", port: 0 });
process.stdout.write(`${JSON.stringify({ msg: "listening", url: address })}\n`);
