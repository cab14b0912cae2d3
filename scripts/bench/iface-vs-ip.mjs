// iface_info and route_info over HTTP against the `ip -j` command a user would type, interleaved pairs, p50/p95.
// Run inside a namespace whose /sys is its own (else iface_info falls back to `ip`, which is the "before"):
//   unshare -n -m sh -c 'ip link set lo up; mount -t sysfs sysfs /sys; node scripts/bench/iface-vs-ip.mjs 200'
// Without the mount line the same command measures the fallback path (the spawn iface_info used to make).
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";

const ex = promisify(execFile);
const N = Number(process.argv[2] ?? 300);
const child = spawn(process.execPath, ["servers/network/dist/main.js"], {
  env: { PORT: "0", LOG_LEVEL: "info", PATH: process.env.PATH },
  stdio: ["ignore", "pipe", "inherit"],
});
let url;
await new Promise((res) =>
  child.stdout.on("data", (d) => {
    const m = /"url":"([^"]+)"/.exec(d.toString());
    if (m && !url) {
      url = m[1];
      res();
    }
  }),
);
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
async function time(fn) {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}
const pairs = [
  ["iface_info", ["-j", "addr", "show"]],
  ["route_info", ["-j", "-4", "route", "show", "table", "main"]],
];
for (const [tool, args] of pairs) {
  const a = [],
    b = [];
  const call = async () => {
    const r = await fetch(`${url}/actions/${tool}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    await r.text();
  };
  for (let i = 0; i < 20; i++) {
    await call();
    await ex("ip", args);
  }
  for (let i = 0; i < N; i++) {
    if (i % 2) {
      a.push(await time(call));
      b.push(await time(() => ex("ip", args)));
    } else {
      b.push(await time(() => ex("ip", args)));
      a.push(await time(call));
    }
  }
  console.log(
    `${tool.padEnd(11)} HTTP p50 ${pct(a, 50).toFixed(2)} ms p95 ${pct(a, 95).toFixed(2)} | ip ${args.join(" ")} p50 ${pct(b, 50).toFixed(2)} p95 ${pct(b, 95).toFixed(2)} | ratio p50 ${(pct(a, 50) / pct(b, 50)).toFixed(2)}× p95 ${(pct(a, 95) / pct(b, 95)).toFixed(2)}×`,
  );
}
child.kill();
