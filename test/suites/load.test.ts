/**
 * Every registered server under load (autocannon, 50 connections, every tool's example with varied deadlines
 * so identical-call sharing does not hide the work): no socket error, no answer a request would not also get
 * on an idle server but the deliberate 503 E_BUSY, subprocesses never above MAX_PROCS (counted from /proc,
 * outside the server), /healthz answered throughout. LOAD_SECONDS sets the duration (CI: 8; the bench: 60).
 */

import { MAX_TIMEOUT_MS } from "@roadnerd/conventions";
import { pidsWhere, rssMb } from "@roadnerd/conventions/testing";
import { loadServer, selectedServers } from "@roadnerd/registry";
import { scaledMs, spawnServer } from "@roadnerd/testkit";
import autocannon from "autocannon";
import { describe, expect, it } from "vitest";
import { worldFor } from "./lib/worlds.ts";

const SECONDS = Number(process.env.LOAD_SECONDS ?? 8);
const MAX_PROCS = 4;
// Low enough that 50 connections reach it: the 503s are part of what is checked.
const MAX_CALLS = 6;

const childrenOf = (pid: number) => pidsWhere("status", (s) => new RegExp(`^PPid:\\s+${pid}$`, "m").test(s)).length;

describe.each(selectedServers())("load on $name", (registered) => {
  it(
    `${SECONDS} s, 50 connections: bounded, typed, responsive`,
    async () => {
      const def = await loadServer(registered.name);
      const world = await worldFor(registered);
      // A start that fails (no dist/) still closes the world.
      const server = await spawnServer(registered.name, {
        env: { ...(world?.env ?? {}), MAX_PROCS: String(MAX_PROCS), MAX_CALLS: String(MAX_CALLS), LOG_LEVEL: "warn" },
      }).catch(async (e: unknown) => {
        await world?.close();
        throw e;
      });
      try {
        const deadline = Math.min(MAX_TIMEOUT_MS - 50, scaledMs(1500));
        const requests = def.tools.flatMap((tool) =>
          Array.from({ length: tool.commands.length ? 20 : 4 }, (_, i) => ({
            label: tool.name,
            method: "POST" as const,
            path: `/actions/${tool.name}`,
            headers: { "content-type": "application/json" },
            // The subject is bounding, not deadlines: a machine already busy before the load gets its room.
            body: JSON.stringify({ ...tool.example, timeout_ms: deadline + i }),
          })),
        );
        // What each request gets on an idle server: the only statuses allowed under load, with 503.
        const idle = new Map<string, Set<number>>();
        for (const r of requests) {
          const res = await fetch(`${server.url}${r.path}`, { method: "POST", headers: r.headers, body: r.body });
          await res.arrayBuffer();
          if (!idle.has(r.label)) idle.set(r.label, new Set([503]));
          idle.get(r.label)?.add(res.status);
        }
        const seen = new Map<string, Map<number, number>>();
        const rssBefore = rssMb(server.pid);
        let peak = 0;
        let healthFailures = 0;
        let healthChecks = 0;
        const sampler = setInterval(() => {
          peak = Math.max(peak, childrenOf(server.pid));
        }, 10);
        // Answered in 2 s on a quiet machine; a machine busy with other work gives proportionally more room.
        const healthDeadline = scaledMs(2000);
        const health = setInterval(() => {
          healthChecks += 1;
          fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(healthDeadline) })
            .then((r) => {
              if (r.status !== 200) healthFailures += 1;
              return r.arrayBuffer();
            })
            .catch(() => {
              healthFailures += 1;
            });
        }, 250);
        const result = await autocannon({
          url: server.url,
          connections: 50,
          duration: SECONDS,
          requests: requests.map((r) => ({
            ...r,
            onResponse: (status: number) => {
              const counts = seen.get(r.label) ?? new Map<number, number>();
              counts.set(status, (counts.get(status) ?? 0) + 1);
              seen.set(r.label, counts);
            },
          })),
        });
        clearInterval(sampler);
        clearInterval(health);
        await new Promise((r) => setTimeout(r, 2500));
        const rssAfter = rssMb(server.pid);
        const busy = [...seen.values()].reduce((n, m) => n + (m.get(503) ?? 0), 0);
        console.log(
          `load ${registered.name}: ${result.requests.total} requests in ${SECONDS} s (${Math.round(result.requests.average)} req/s), ` +
            `${busy} × 503 E_BUSY, ${result.errors} socket errors, peak ${peak} subprocesses (MAX_PROCS ${MAX_PROCS}), ` +
            `/healthz ${healthChecks - healthFailures}/${healthChecks} answered, RSS ${rssBefore.toFixed(0)} → ${rssAfter.toFixed(0)} MB`,
        );
        expect(result.errors).toBe(0);
        expect(result.timeouts).toBe(0);
        for (const [label, counts] of seen) {
          for (const status of counts.keys()) expect(idle.get(label), `${label} answered ${status}`).toContain(status);
        }
        expect(peak).toBeLessThanOrEqual(MAX_PROCS);
        expect(healthFailures).toBe(0);
      } finally {
        await server.stop();
        await world?.close();
      }
    },
    (SECONDS + 60) * 1000,
  );
});
