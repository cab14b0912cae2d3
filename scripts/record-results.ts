/**
 * `pnpm record-results`: run every registered tool for real in its README world (the worlds the README curl
 * lines run in) and record what it answered to test/fixtures/recorded/<server>.json. The inputs are each
 * README's POST /actions lines, the tool's own example, and a few calls made to give large answers (a deep
 * directory walk, forty listening sockets, a dozen processes of one name). process_info is asked only about
 * processes the recorder started itself, so no other command line on this machine is recorded.
 * test/model-views.test.ts holds every recorded
 * result to its tool's schema and its model view to the token budget. Sealed like the tests (no network).
 * It runs under vitest (scripts/record-results.config.ts), which loads the worlds' CommonJS helpers as they are;
 * RECORD_ONLY=network,ports narrows it to some servers.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { curlExamples } from "@roadnerd/conventions/testing";
import { loadServer, REPO_ROOT, type RegisteredServer, readRegistry } from "@roadnerd/registry";
import {
  NM_EXPECTED_BODY,
  type PortalMode,
  REAL_PROBE_HOSTS_DENY,
  spawnServer,
  startCaptivePortal,
} from "@roadnerd/testkit";
import { request } from "undici";
import { it } from "vitest";
import { worldFor } from "../test/suites/lib/worlds.ts";

export const RESULTS_DIR = join(REPO_ROOT, "test/fixtures/recorded");

type Call = { tool: string; input: Record<string, unknown> };

/** The name of the processes process_info is asked about: a copy of sleep the recorder starts a dozen of. */
const SLEEPER = "rn-rec-sleeper";

/** A dozen sleepers under one name of our own (killed when recorded). */
function sleepers(n: number): { children: ChildProcess[]; close(): void } {
  const dir = mkdtempSync(join(tmpdir(), "rn-record-"));
  const bin = join(dir, SLEEPER);
  copyFileSync("/bin/sleep", bin);
  const children = Array.from({ length: n }, () => spawn(bin, ["600"], { stdio: "ignore" }));
  return {
    children,
    close() {
      for (const c of children) c.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Calls that give the largest answers each server can give here, beside its README's. */
const LARGE: Record<string, Call[]> = {
  storage: [
    { tool: "top_consumers", input: { path: "/usr", depth: 3, n: 100, timeout_ms: 10_000 } },
    { tool: "disk_usage", input: { include_pseudo: true, limit: 100 } },
  ],
  ports: [
    { tool: "listening_sockets", input: { limit: 100 } },
    { tool: "process_info", input: { name: SLEEPER, limit: 100 } },
  ],
  network: [
    { tool: "iface_info", input: { limit: 100 } },
    { tool: "route_info", input: { limit: 100 } },
  ],
};

/** `curl … /actions/<tool> … -d '<json>'` → the call, for the README lines that must answer a result. */
function readmeCalls(markdown: string): Call[] {
  const calls: Call[] = [];
  for (const ex of curlExamples(markdown)) {
    const m = /-X POST \S+\/actions\/([a-z_]+)\b/.exec(ex.line);
    if (!m?.[1] || ex.expectCode) continue;
    const body = /-d '([^']*)'/.exec(ex.line)?.[1];
    calls.push({ tool: m[1], input: body ? JSON.parse(body) : {} });
  }
  return calls;
}

/** Forty listeners in this (sealed) namespace, so listening_sockets has a long answer to give. */
async function listeners(n: number): Promise<Server[]> {
  return Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Server>((resolve, reject) => {
          const s = createServer();
          s.once("error", reject);
          s.listen(0, "127.0.0.1", () => resolve(s));
        }),
    ),
  );
}

/** Mounts under /mnt are this machine's own tooling, not a laptop's disks: left out of what is recorded. */
function redacted(tool: string, result: unknown): unknown {
  if (tool !== "disk_usage" || typeof result !== "object" || result === null || !("mounts" in result)) return result;
  const mounts = Array.isArray(result.mounts) ? result.mounts : [];
  return { ...result, mounts: mounts.filter((m: { mount?: unknown }) => !String(m.mount).startsWith("/mnt/")) };
}

/** POST each call to a live server; keep what answered 200. */
async function callAll(url: string, calls: readonly Call[], into: Array<Call & { result: unknown }>): Promise<void> {
  for (const call of calls) {
    const res = await request(`${url}/actions/${call.tool}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(call.input),
    });
    const result = await res.body.json();
    if (res.statusCode === 200) into.push({ ...call, result: redacted(call.tool, result) });
    else process.stderr.write(`${call.tool} ${JSON.stringify(call.input)}: ${res.statusCode}\n`);
  }
}

/** The network server behind each kind of captive portal (the eval's portal worlds, on loopback). */
async function portalResults(into: Array<Call & { result: unknown }>): Promise<void> {
  const modes: PortalMode[] = ["redirect", "login200", "status511", "metaRefresh200", "open"];
  const portal = await startCaptivePortal();
  try {
    for (const mode of modes) {
      portal.mode = mode;
      const server = await spawnServer("network", {
        env: {
          CAPTIVE_TEST_URL: `${portal.url}/`,
          CAPTIVE_PROBES: JSON.stringify([
            { url: `${portal.url}/generate_204`, expect: 204 },
            { url: `${portal.url}/expected`, expect: NM_EXPECTED_BODY },
          ]),
          OUTBOUND_DENY: REAL_PROBE_HOSTS_DENY,
        },
      });
      try {
        await callAll(server.url, [{ tool: "captive_portal_check", input: {} }], into);
      } finally {
        await server.stop();
      }
    }
  } finally {
    await portal.close();
  }
}

async function record(s: RegisteredServer): Promise<number> {
  const { name, dir } = s;
  const def = await loadServer(name);
  // process_info only about our own processes: another process's command line is not ours to record.
  const own = name === "ports" ? sleepers(12) : undefined;
  const readme = readmeCalls(readFileSync(join(REPO_ROOT, dir, "README.md"), "utf8")).filter(
    (c) => c.tool !== "process_info",
  );
  const calls = [...readme, ...(LARGE[name] ?? [])];
  const first = own?.children[0]?.pid;
  if (first) calls.push({ tool: "process_info", input: { pid: first } });
  for (const t of def.tools) if (!calls.some((c) => c.tool === t.name)) calls.push({ tool: t.name, input: t.example });
  const world = await worldFor(s);
  const extra = name === "ports" ? await listeners(40) : [];
  const env = { ...world?.env, ...(name === "storage" ? { STORAGE_ROOTS: "/usr:/var:/tmp" } : {}) };
  const recorded: Array<Call & { result: unknown }> = [];
  try {
    const server = await spawnServer(name, { env });
    try {
      await callAll(server.url, calls, recorded);
    } finally {
      await server.stop();
    }
  } finally {
    await world?.close();
    for (const l of extra) l.close();
    own?.close();
  }
  if (name === "network") await portalResults(recorded);
  writeFileSync(join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(recorded, null, 2)}\n`);
  return recorded.length;
}

const only = (process.env.RECORD_ONLY ?? "").split(",").filter(Boolean);

it("records every tool's results in its README world", { timeout: 600_000 }, async () => {
  for (const s of readRegistry()) {
    if (only.length && !only.includes(s.name)) continue;
    process.stdout.write(`${s.name}: ${await record(s)} results\n`);
  }
});
