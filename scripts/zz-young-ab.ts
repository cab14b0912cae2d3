// Scratch (deleted after): /healthz p99 of ports held young-gen vs not (ROADNERD_CODE_CACHE=write skips the tuning; run from a copy).
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { probe } from "./bench/hot-path.ts";
import { f1, pct, post, start } from "./bench/lib.ts";
const copy = mkdtempSync(join(tmpdir(), "rn-young-"));
cpSync("servers/ports/dist", copy, { recursive: true });
const a = await start(process.execPath, ["servers/ports/dist/main.js"], { SOCKETS_SOURCE: "ss" });
const b = await start(process.execPath, [join(copy, "main.js")], { SOCKETS_SOURCE: "ss", ROADNERD_CODE_CACHE: "write" });
await new Promise((r) => setTimeout(r, 1500));
const res: Record<string, number[][]> = { held: [], free: [], heldSpawn: [], freeSpawn: [] };
for (let round = 0; round < 4; round++) {
  for (const [k, s] of round % 2 ? ([["free", b], ["held", a]] as const) : ([["held", a], ["free", b]] as const)) {
    res[k]?.push(await probe(s.url, 3));
    let stop = false;
    const loops = Array.from({ length: 8 }, async () => {
      for (let i = 0; i < 100_000 && !stop; i++) await post(`${s.url}/actions/listening_sockets`, {}).catch(() => undefined);
    });
    const xs = await probe(s.url, 3);
    stop = true;
    await Promise.all(loops);
    res[`${k}Spawn`]?.push(xs);
  }
}
for (const [k, rounds] of Object.entries(res)) console.log(k.padEnd(10), rounds.map((xs) => `p99 ${f1(pct(xs, 99))} p50 ${f1(pct(xs, 50))}`).join(" | "));
a.kill();
b.kill();
rmSync(copy, { recursive: true, force: true });
