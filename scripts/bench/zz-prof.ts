import { request } from "undici";
import { spawnListening } from "@roadnerd/testkit";
const entry = process.argv[2]!; const path = process.argv[3]!; const n = Number(process.argv[4] ?? 5000);
const { url, child } = await spawnListening([process.execPath, "--cpu-prof", "--cpu-prof-dir=" + (process.env.PROF_DIR ?? "/tmp/s/prof"), "--cpu-prof-interval=50", entry], { env: { LOG_LEVEL: "warn", ROADNERD_CODE_CACHE: "off" }, timeoutMs: 20000 });
const method = path === "/healthz" ? "GET" : "POST";
for (let i = 0; i < n; i++) { const r = await request(url + path, method === "POST" ? { method, headers: {"content-type":"application/json"}, body: "{}" } : {}); await r.body.arrayBuffer(); }
child.kill("SIGINT");
await new Promise((r) => child.once("exit", r));
