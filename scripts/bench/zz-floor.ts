import { start, cpuMicros, pct } from "./lib.ts";
import { request } from "undici";
const entry = process.argv[2] ?? "/work/main/servers/dns-config/dist/main.js";
const tool = process.argv[3] ?? "dns_config_get";
const p = await start(process.execPath, [entry], { LOG_LEVEL: process.env.LL ?? "warn" });
const kinds: Record<string, () => Promise<unknown>> = {
  healthz: async () => { const r = await request(`${p.url}/healthz`); await r.body.arrayBuffer(); },
  postHealthz: async () => { const r = await request(`${p.url}/healthz`, { method: "POST", headers: {"content-type":"application/json"}, body: "{}" }); await r.body.arrayBuffer(); },
  tool: async () => { const r = await request(`${p.url}/actions/${tool}`, { method: "POST", headers: {"content-type":"application/json"}, body: "{}" }); await r.body.arrayBuffer(); },
  resolved: async () => { const r = await request(`${p.url}/actions/resolved_status`, { method: "POST", headers: {"content-type":"application/json"}, body: "{}" }); await r.body.arrayBuffer(); },
  bad: async () => { const r = await request(`${p.url}/actions/nosuch`, { method: "POST", headers: {"content-type":"application/json"}, body: "{}" }); await r.body.arrayBuffer(); },
};
for (let round = 0; round < 2; round++) {
  for (const [k, fn] of Object.entries(kinds)) {
    for (let i = 0; i < 300; i++) await fn();
    const c0 = cpuMicros(p.pid); const xs: number[] = [];
    for (let i = 0; i < 1000; i++) { const t = process.hrtime.bigint(); await fn(); xs.push(Number(process.hrtime.bigint() - t) / 1e6); }
    const cpu = (cpuMicros(p.pid) - c0) / 1000;
    console.log(round, k.padEnd(12), "p50", pct(xs,50).toFixed(3), "p95", pct(xs,95).toFixed(3), "server CPU/call µs", cpu.toFixed(0));
  }
}
p.kill();
