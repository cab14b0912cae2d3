import { callTool, testRuntime } from "@roadnerd/conventions/testing";
import { loadServer } from "@roadnerd/registry";
import si from "systeminformation";
import { createServer } from "node:net";
for (let i = 0; i < 6; i++) { const s = createServer(); await new Promise<void>((r) => s.listen(0, "127.0.0.1", r)); }
const def = await loadServer("ports");
const tool = def.tools.find((t) => t.name === "listening_sockets")!;
const runtime = testRuntime(def, { env: {} });
const t = async (name: string, between?: () => Promise<unknown>) => {
  const xs: number[] = [];
  for (let i = 0; i < Number(process.env.N ?? 60); i++) { if (between) await between(); const t0 = performance.now(); await callTool(def, tool, {}, { runtime }); xs.push(performance.now() - t0); }
  xs.sort((a, b) => a - b); console.log(name.padEnd(30), "p50", xs[Math.floor(xs.length/2)]!.toFixed(2), "p95", xs[Math.floor(xs.length*0.95)]!.toFixed(2));
};
await t("alone");
await t("alone");
if (!process.env.N) await t("after si.networkConnections", () => si.networkConnections());
if (!process.env.N) await t("after a sleep 5ms", () => new Promise((r) => setTimeout(r, 5)));
await runtime.close(); process.exit(0);
