/**
 * GET /probe on the real built network server against local targets (probe-world.ts): each module's
 * probe_success on a healthy and a failing target, the blackbox series users graph, and ours (the captive
 * verdict, where a probe failed, the refusal reason). Modules come from the defaults and from a PROBE_CONFIG file.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REAL_PROBE_HOSTS_DENY, type SpawnedServer, spawnServer } from "@roadnerd/testkit";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProbeWorld, startProbeWorld } from "../helpers/probe-world.ts";

let world: ProbeWorld;
let dir: string;
const spawned: SpawnedServer[] = [];
let base: string;

beforeAll(async () => {
  world = await startProbeWorld();
  dir = await mkdtemp(join(tmpdir(), "rn-probe-"));
  const config = join(dir, "modules.yml");
  await writeFile(
    config,
    [
      "modules:",
      "  http_2xx: { prober: http, timeout: 2s }",
      "  http_204: { prober: http, timeout: 2s, http: { valid_status_codes: [204] } }",
      "  http_insecure: { prober: http, http: { tls_config: { insecure_skip_verify: true } } }",
      "  tcp_connect: { prober: tcp, timeout: 2s }",
      "  tls: { prober: tcp, timeout: 2s, tcp: { tls: true } }",
      "  dns: { prober: dns, timeout: 2s, dns: { query_name: host.example.test, query_type: A } }",
      "  dns_missing: { prober: dns, timeout: 2s, dns: { query_name: nowhere.example.test } }",
      "  captive_portal: { prober: captive_portal, timeout: 3s }",
      "",
    ].join("\n"),
  );
  const server = await spawnServer("network", {
    env: {
      OUTBOUND_DENY: REAL_PROBE_HOSTS_DENY,
      NODE_EXTRA_CA_CERTS: world.certs.caFile,
      CAPTIVE_PROBES: world.captiveProbes,
      CAPTIVE_TEST_URL: `${world.open.url}/`,
      PROBE_CONFIG: config,
    },
  });
  spawned.push(server);
  base = server.url;
});

afterAll(async () => {
  await Promise.allSettled(spawned.map((s) => s.stop()));
  await world?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function probe(module: string, target: string): Promise<{ status: number; text: string }> {
  const url = `${base}/probe?module=${module}&target=${encodeURIComponent(target)}`;
  const res = await request(url);
  return { status: res.statusCode, text: await res.body.text() };
}

function value(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /probe", () => {
  it("http_2xx: a healthy server is a success with the status, phases and protocol", async () => {
    const { status, text } = await probe("http_2xx", `${world.plain.url}/ok`);
    expect(status).toBe(200);
    expect(value(text, "probe_success")).toBe(1);
    expect(value(text, "probe_http_status_code")).toBe(200);
    expect(value(text, "probe_http_ssl")).toBe(0);
    expect(value(text, "probe_ip_protocol")).toBe(4);
    expect(value(text, "probe_duration_seconds")).toBeGreaterThan(0);
    for (const phase of ["resolve", "connect", "tls", "processing", "transfer"])
      expect(value(text, `probe_http_duration_seconds{phase="${phase}"}`)).toBeGreaterThanOrEqual(0);
    expect(value(text, 'probe_http_duration_seconds{phase="connect"}')).toBeGreaterThan(0);
  });

  it("http_2xx over TLS: a trusted certificate gives its expiry; an expired or misnamed one fails", async () => {
    const good = await probe("http_2xx", `${world.valid.url}/ok`);
    expect(value(good.text, "probe_success")).toBe(1);
    expect(value(good.text, "probe_http_ssl")).toBe(1);
    const expiry = value(good.text, "probe_ssl_earliest_cert_expiry") ?? 0;
    // The test certificate is valid for 90 days from now.
    expect(expiry - Date.now() / 1000).toBeGreaterThan(80 * 86_400);
    expect(expiry - Date.now() / 1000).toBeLessThan(100 * 86_400);
    expect(good.text).toMatch(/^probe_tls_version_info\{version="TLS 1\.[23]"\} 1$/m);
    const expired = await probe("http_2xx", `${world.expired.url}/ok`);
    expect(value(expired.text, "probe_success")).toBe(0);
    expect(value(expired.text, "probe_ssl_earliest_cert_expiry")).toBeLessThan(Date.now() / 1000);
    expect(value((await probe("http_2xx", `${world.wrongName.url}/ok`)).text, "probe_success")).toBe(0);
    expect(value((await probe("http_insecure", `${world.expired.url}/ok`)).text, "probe_success")).toBe(1);
  });

  it("http: a refused port, a late answer and an unexpected status fail, each saying where", async () => {
    const refused = await probe("http_2xx", `http://${world.refused}/`);
    expect(value(refused.text, "probe_success")).toBe(0);
    expect(value(refused.text, "probe_http_status_code")).toBe(0);
    expect(refused.text).toMatch(/^roadnerd_probe_failed\{phase="connect",code="E_CONN_REFUSED"\} 1$/m);
    const slow = await probe("http_2xx", `${world.slow.url}/`);
    expect(value(slow.text, "probe_success")).toBe(0);
    expect(slow.text).toMatch(/code="E_TIMEOUT"/);
    expect(value(slow.text, "probe_duration_seconds")).toBeLessThan(3.5);
    expect(value((await probe("http_204", `${world.plain.url}/ok`)).text, "probe_success")).toBe(0);
    expect(value((await probe("http_204", `${world.open.url}/generate_204`)).text, "probe_success")).toBe(1);
  });

  it("tcp_connect and tls", async () => {
    const open = await probe("tcp_connect", `127.0.0.1:${world.plain.port}`);
    expect(value(open.text, "probe_success")).toBe(1);
    expect(value((await probe("tcp_connect", world.refused)).text, "probe_success")).toBe(0);
    const tls = await probe("tls", `localhost:${world.valid.port}`);
    expect(value(tls.text, "probe_success")).toBe(1);
    expect(value(tls.text, "probe_ssl_earliest_cert_expiry")).toBeGreaterThan(Date.now() / 1000);
    expect(value((await probe("tls", `localhost:${world.wrongName.port}`)).text, "probe_success")).toBe(0);
    expect(value((await probe("tls", `127.0.0.1:${world.plain.port}`)).text, "probe_success")).toBe(0);
  });

  it("dns: an answer is a success with its counts; NXDOMAIN is not", async () => {
    const found = await probe("dns", `127.0.0.1:${world.dns.port}`);
    expect(value(found.text, "probe_success")).toBe(1);
    expect(value(found.text, "probe_dns_answer_rrs")).toBe(1);
    expect(value(found.text, "probe_dns_query_succeeded")).toBe(1);
    expect(value(found.text, 'probe_dns_duration_seconds{phase="request"}')).toBeGreaterThan(0);
    const missing = await probe("dns_missing", `127.0.0.1:${world.dns.port}`);
    expect(value(missing.text, "probe_success")).toBe(0);
    expect(value(missing.text, "probe_dns_answer_rrs")).toBe(0);
  });

  it("captive_portal: an open network succeeds, a portal fails with the verdict", async () => {
    const open = await probe("captive_portal", `${world.open.url}/generate_204`);
    expect(value(open.text, "probe_success")).toBe(1);
    expect(value(open.text, "roadnerd_probe_captive_portal_suspected")).toBe(0);
    const portal = await probe("captive_portal", `${world.portal.url}/generate_204`);
    expect(value(portal.text, "probe_success")).toBe(0);
    expect(value(portal.text, "roadnerd_probe_captive_portal_suspected")).toBe(1);
    expect(value(portal.text, "probe_http_status_code")).toBe(200);
  });

  it("a target the policy refuses is a failed probe naming the reason, and counted in /metrics", async () => {
    const refused = await probe("http_2xx", "http://169.254.169.254/latest/meta-data/");
    expect(refused.status).toBe(200);
    expect(value(refused.text, "probe_success")).toBe(0);
    expect(value(refused.text, 'roadnerd_probe_refused{reason="default_deny"}')).toBe(1);
    const metrics = await (await request(`${base}/metrics`)).body.text();
    expect(value(metrics, 'roadnerd_outbound_refusals_total{reason="default_deny"}')).toBeGreaterThanOrEqual(1);
    expect(value(metrics, 'roadnerd_probes_total{module="http_2xx",success="1"}')).toBeGreaterThanOrEqual(1);
  });

  it("an unknown module or a missing target is 400 naming the modules", async () => {
    const unknown = await probe("icmp", "127.0.0.1");
    expect(unknown.status).toBe(400);
    expect(JSON.parse(unknown.text)).toMatchObject({ error: { code: "E_INVALID_INPUT" } });
    expect(unknown.text).toContain("http_204");
    const res = await request(`${base}/probe?module=http_2xx`);
    expect(res.statusCode).toBe(400);
    await res.body.dump();
  });
});
