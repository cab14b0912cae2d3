/**
 * A real Prometheus (Debian's) on 127.0.0.1 with its own config and data dir scrapes two real servers' /metrics
 * and, with blackbox-style relabeling, the network server's /probe; its query API returns our series, and it
 * loads the example alerting rules, which promtool checks too (deploy/prometheus/).
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { readRegistry } from "@roadnerd/registry";
import { REAL_PROBE_HOSTS_DENY, REPO_ROOT, type SpawnedServer, spawnServer } from "@roadnerd/testkit";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProbeWorld, startProbeWorld } from "../../servers/network/test/helpers/probe-world.ts";
import { type Daemon, eventually, startDaemon, tempDir } from "./daemon.ts";

const run = promisify(execFile);
const RULES = join(REPO_ROOT, "deploy/prometheus/roadnerd-alerts.yml");
const EXAMPLE = join(REPO_ROOT, "deploy/prometheus/prometheus.yml");

let world: ProbeWorld;
const servers: SpawnedServer[] = [];
let prometheus: Daemon | undefined;
let network: SpawnedServer;
let ports: SpawnedServer;

const hostOf = (url: string) => new URL(url).host;

beforeAll(async () => {
  world = await startProbeWorld();
  const track = (s: SpawnedServer) => {
    servers.push(s);
    return s;
  };
  [network, ports] = await Promise.all([
    spawnServer("network", { env: { OUTBOUND_DENY: REAL_PROBE_HOSTS_DENY } }).then(track),
    spawnServer("ports").then(track),
  ]);
  const dir = await tempDir("rn-prometheus-");
  const config = {
    global: { scrape_interval: "1s", scrape_timeout: "1s", evaluation_interval: "1s" },
    rule_files: [RULES],
    scrape_configs: [
      { job_name: "roadnerd", static_configs: [{ targets: [hostOf(network.url), hostOf(ports.url)] }] },
      {
        job_name: "roadnerd_probe",
        metrics_path: "/probe",
        // The probe's deadline is the scrape timeout less half a second, as with blackbox_exporter.
        scrape_interval: "2s",
        scrape_timeout: "2s",
        params: { module: ["http_2xx"] },
        static_configs: [{ targets: [`${world.plain.url}/ok`, `http://${world.refused}/`] }],
        relabel_configs: [
          { source_labels: ["__address__"], target_label: "__param_target" },
          { source_labels: ["__param_target"], target_label: "instance" },
          { source_labels: ["__param_module"], target_label: "module" },
          { target_label: "__address__", replacement: hostOf(network.url) },
        ],
      },
    ],
  };
  // JSON is YAML: Prometheus reads it as it is.
  await writeFile(join(dir, "prometheus.yml"), JSON.stringify(config, null, 2));
  prometheus = await startDaemon("prometheus", dir, (port) => [
    `--config.file=${join(dir, "prometheus.yml")}`,
    `--storage.tsdb.path=${join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${port}`,
    "--log.level=warn",
  ]);
});

afterAll(async () => {
  await prometheus?.stop();
  await Promise.allSettled(servers.map((s) => s.stop()));
  await world?.close();
});

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

async function query(promql: string): Promise<Sample[]> {
  const res = await request(`${prometheus?.url}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await res.body.json()) as { status: string; data: { result: Sample[] } };
  if (body.status !== "success") throw new Error(`query failed: ${JSON.stringify(body)}`);
  return body.data.result;
}

/** The query's samples once it returns `count` of them. */
const samples = (promql: string, count: number) =>
  eventually(`${count} samples of ${promql}`, async () => {
    const result = await query(promql);
    return result.length >= count ? result : undefined;
  });

describe("a real Prometheus scraping RoadNerd", () => {
  it("scrapes both servers' /metrics: up, identity, bounds and process metrics", async () => {
    const up = await samples('up{job="roadnerd"} == 1', 2);
    expect(up.map((s) => s.metric.instance).sort()).toEqual([hostOf(network.url), hostOf(ports.url)].sort());
    const info = await samples("roadnerd_server_info", 2);
    expect(info.map((s) => s.metric.server).sort()).toEqual(["network", "ports"]);
    expect(await samples('roadnerd_bound_limit{bound="tool_calls"}', 2)).toHaveLength(2);
    const rss = await samples('process_resident_memory_bytes{job="roadnerd"}', 2);
    for (const s of rss) expect(Number(s.value[1])).toBeGreaterThan(0);
  });

  it("counts tool calls it scraped after they happened", async () => {
    const res = await request(`${network.url}/actions/tcp_port_check`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ host: "127.0.0.1", port: world.plain.port }),
    });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    const [calls] = await samples('roadnerd_tool_calls_total{tool="tcp_port_check",code="ok"}', 1);
    expect(Number(calls?.value[1])).toBeGreaterThanOrEqual(1);
    expect(await samples('roadnerd_tool_call_duration_seconds_count{tool="tcp_port_check"}', 1)).toHaveLength(1);
  });

  it("probes through /probe with blackbox-style relabeling: one series per target", async () => {
    // A server's first probe may miss its deadline on a loaded machine (a cold start): wait for a healthy one.
    await samples(`probe_success{instance="${world.plain.url}/ok"} == 1`, 1);
    const results = await samples('probe_success{job="roadnerd_probe"}', 2);
    const byTarget = Object.fromEntries(results.map((s) => [s.metric.instance, Number(s.value[1])]));
    expect(byTarget).toEqual({ [`${world.plain.url}/ok`]: 1, [`http://${world.refused}/`]: 0 });
    expect(results.every((s) => s.metric.module === "http_2xx")).toBe(true);
    const phases = await samples(`probe_http_duration_seconds{instance="${world.plain.url}/ok"}`, 5);
    expect(phases.map((s) => s.metric.phase).sort()).toEqual(["connect", "processing", "resolve", "tls", "transfer"]);
    const [status] = await samples(`probe_http_status_code{instance="${world.plain.url}/ok"}`, 1);
    expect(status?.value[1]).toBe("200");
  });

  it("loads the example alerting rules, and the failing probe fires its alert", async () => {
    const res = await request(`${prometheus?.url}/api/v1/rules`);
    const body = (await res.body.json()) as { data: { groups: Array<{ name: string; rules: unknown[] }> } };
    expect(body.data.groups.map((g) => g.name).sort()).toEqual(["roadnerd-probes", "roadnerd-servers"]);
    // RoadNerdProbeFailing waits 5 minutes before firing; pending is what it is after one evaluation.
    const alerts = await eventually("a pending RoadNerdProbeFailing alert", async () => {
      const r = await request(`${prometheus?.url}/api/v1/alerts`);
      const a = (await r.body.json()) as { data: { alerts: Array<{ labels: Record<string, string>; state: string }> } };
      const found = a.data.alerts.filter((x) => x.labels.alertname === "RoadNerdProbeFailing");
      return found.length ? found : undefined;
    });
    expect(alerts.map((a) => a.labels.instance)).toEqual([`http://${world.refused}/`]);
  });
});

describe("promtool", () => {
  it("checks the example rules and configuration", async () => {
    const rules = await run("promtool", ["check", "rules", RULES]);
    expect(rules.stdout).toMatch(/SUCCESS: 8 rules found/);
    const config = await run("promtool", ["check", "config", EXAMPLE]);
    expect(config.stdout).toMatch(/is valid prometheus config file syntax/);
  });

  it("fails a broken rule (the check can fail)", async () => {
    const dir = await tempDir("rn-promtool-");
    const broken = join(dir, "broken.yml");
    await writeFile(broken, "groups:\n  - name: x\n    rules:\n      - alert: X\n        expr: rate(up[5m]\n");
    try {
      await expect(run("promtool", ["check", "rules", broken])).rejects.toMatchObject({ code: 1 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("the example configuration", () => {
  it("scrapes every registered server's default port, as its header says", () => {
    const text = readFileSync(join(REPO_ROOT, "deploy/prometheus/prometheus.yml"), "utf8");
    const job = /job_name: roadnerd\s+static_configs:\s+- targets:\s*\[([^\]]*)\]/.exec(text)?.[1] ?? "";
    const ports = [...job.matchAll(/:(\d+)"/g)].map((m) => Number(m[1])).sort();
    expect(ports).toEqual(
      readRegistry()
        .map((s) => s.defaultPort)
        .sort(),
    );
  });
});
