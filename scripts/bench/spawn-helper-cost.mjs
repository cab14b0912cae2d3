// The spawn helper's cost, A/B builds of the ports server (SOCKETS_SOURCE=ss): USS idle, after one spawning call,
// after 200; attach (spawn → first /healthz 200); rounds alternating, medians (ADR 0042).
//   ROUNDS=6 unshare -n sh -c 'ip link set lo up; node scripts/bench/spawn-helper-cost.mjs A/main.js B/main.js'
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

const mains = process.argv.slice(2);
const uss = (pid) => {
  let t = 0;
  for (const m of readFileSync(`/proc/${pid}/smaps_rollup`, "utf8").matchAll(/Private_(?:Clean|Dirty):\s+(\d+)/g))
    t += Number(m[1]);
  return t / 1024;
};
function start(main) {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [main], {
      env: { PATH: process.env.PATH, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "warn", SOCKETS_SOURCE: "ss" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const timer = setTimeout(() => reject(new Error("no start")), 30000);
    child.stdout.on("data", async (d) => {
      const m = /"url":"([^"]+)"/.exec(d.toString());
      if (!m) return;
      clearTimeout(timer);
      await (await fetch(`${m[1]}/healthz`)).arrayBuffer();
      resolve({ child, url: m[1], attach: performance.now() - t0 });
    });
  });
}
const call = async (url) => {
  const r = await fetch(`${url}/actions/listening_sockets`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  await r.text();
  if (r.status !== 200) throw new Error(String(r.status));
};
const out = mains.map(() => ({ attach: [], idle: [], one: [], many: [], threads: [] }));
for (let r = 0; r < Number(process.env.ROUNDS ?? 6); r++) {
  const order = mains.map((_, k) => k);
  if (r % 2) order.reverse();
  for (const k of order) {
    const s = await start(mains[k]);
    await new Promise((res) => setTimeout(res, 300));
    out[k].attach.push(s.attach);
    out[k].idle.push(uss(s.child.pid));
    await call(s.url);
    await new Promise((res) => setTimeout(res, 300));
    out[k].one.push(uss(s.child.pid));
    out[k].threads.push(Number(/Threads:\s+(\d+)/.exec(readFileSync(`/proc/${s.child.pid}/status`, "utf8"))[1]));
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = 0; i < 25; i++) await call(s.url);
      }),
    );
    await new Promise((res) => setTimeout(res, 300));
    out[k].many.push(uss(s.child.pid));
    s.child.kill("SIGKILL");
  }
}
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [k, m] of mains.entries())
  console.log(
    m.padEnd(40),
    `attach p50 ${med(out[k].attach).toFixed(0)} ms (${out[k].attach.map((x) => x.toFixed(0)).join(" ")}); USS MiB idle ${med(out[k].idle).toFixed(1)}, after 1 call ${med(out[k].one).toFixed(1)}, after 200 ${med(out[k].many).toFixed(1)}; threads ${med(out[k].threads)}`,
  );
