/**
 * A standalone server's memory (issue 18, F9): RSS idle (2 s and 22 s after start), after each of ROUNDS ×
 * REQUESTS (half /healthz, half a cheap tool call, 16 connections), then over QUIET_S quiet seconds, for each
 * build named, one after the other (each its own process). Run:
 * `node scripts/sealed.mjs scripts/run-ts.mjs scripts/bench/server-memory.ts [main.js…]`
 * (default servers/network/dist/main.js; env ROUNDS, REQUESTS, QUIET_S, TOOL).
 */
import autocannon from "autocannon";
import { f1, rssMb, start } from "./lib.ts";

const ROUNDS = Number(process.env.ROUNDS ?? 4);
const REQUESTS = Number(process.env.REQUESTS ?? 14_000);
const QUIET_S = Number(process.env.QUIET_S ?? 60);
const TOOL = process.env.TOOL ?? "iface_info";

async function one(main: string): Promise<string> {
  const proc = await start(process.execPath, [main], { HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "warn" });
  try {
    await new Promise((r) => setTimeout(r, 2_000));
    const points = [`idle ${f1(rssMb(proc.pid))}`];
    // A trimmed process (ADR 0041) gives its start-up garbage back after 15–20 s of quiet.
    await new Promise((r) => setTimeout(r, 20_000));
    points.push(`idle 22s ${f1(rssMb(proc.pid))}`);
    for (let round = 1; round <= ROUNDS; round += 1) {
      await autocannon({
        url: proc.url,
        connections: 16,
        amount: REQUESTS,
        requests: [
          { method: "GET", path: "/healthz" },
          {
            method: "POST",
            path: `/actions/${TOOL}`,
            headers: { "content-type": "application/json" },
            body: "{}",
          },
        ],
      });
      points.push(`${round}×${REQUESTS} ${f1(rssMb(proc.pid))}`);
    }
    for (let s = 20; s <= QUIET_S; s += 20) {
      await new Promise((r) => setTimeout(r, 20_000));
      points.push(`quiet ${s}s ${f1(rssMb(proc.pid))}`);
    }
    return `${main}: RSS MB ${points.join(" · ")}`;
  } finally {
    proc.kill();
  }
}

const mains = process.argv.slice(2).filter((a) => a.endsWith(".js"));
for (const main of mains.length ? mains : ["servers/network/dist/main.js"]) console.log(await one(main));
