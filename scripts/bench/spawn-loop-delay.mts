// The spawning thread's event-loop delay while 8 spawns of `ss -Hltnup` run at a time for 2 s, rounds alternating:
// child_process.execFile on this thread against the kernel's exec (the fork on its helper thread, ADR 0042).
// Medians of the rounds. A heap of about a server's is kept alive (fork's cost grows with it).
//   node scripts/bench/spawn-loop-delay.mts [ROUNDS] [BALLAST]   (Node ≥ 22.18: type stripping)
import { execFile } from "node:child_process";
import { loadavg } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { command } from "../../packages/conventions/src/define/command.ts";
import { createExec } from "../../packages/conventions/src/exec/exec.ts";

const PATH = "/usr/bin:/bin:/usr/sbin:/sbin";
const ss = command("ss", ["-Hltnup"]);
const relayed = createExec([ss], PATH);
const ballast = Array.from({ length: Number(process.argv[3] ?? 30_000) }, (_, i) => ({ i, s: `x${i}` }));
const sides = {
  thread: () => new Promise((r) => execFile("ss", ["-Hltnup"], { env: { PATH } }, r)),
  relay: () => relayed(ss, undefined, { timeoutMs: 10_000 }),
};
type Side = keyof typeof sides;
const rounds = Number(process.argv[2] ?? 6);
const res: Record<Side, number[][]> = { thread: [], relay: [] };
await sides.relay();
await sides.thread();
for (let r = 0; r < rounds; r++) {
  for (const k of (r % 2 ? ["thread", "relay"] : ["relay", "thread"]) as Side[]) {
    const h = monitorEventLoopDelay({ resolution: 1 });
    h.enable();
    let n = 0;
    const end = performance.now() + 2000;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = 0; i < 100_000 && performance.now() < end; i++, n++) await sides[k]();
      }),
    );
    h.disable();
    res[k].push([h.percentile(99) / 1e6, h.max / 1e6, n]);
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
for (const k of ["thread", "relay"] as Side[]) {
  const col = (c: number) => med(res[k].map((x) => x[c] ?? 0)).toFixed(1);
  console.log(
    `${k.padEnd(7)} loop delay p99 ${col(0)} ms, max ${col(1)} ms, spawns per 2 s ${col(2)} (rounds' p99: ${res[k].map((x) => (x[0] ?? 0).toFixed(1)).join(" ")})`,
  );
}
console.log(
  `RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB (${ballast.length} objects held), load ${loadavg()[0]?.toFixed(1)}`,
);
