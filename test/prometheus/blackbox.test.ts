/**
 * Our /probe beside Debian's blackbox_exporter on the same local targets (probe-world.ts): healthy, refused,
 * slow, bad certificates, an open network and a captive portal, DNS. Where both can judge, probe_success must
 * agree; our probe time as a ratio of its is printed (the median of a few rounds), not asserted. The captive
 * portal is our module against blackbox's nearest (http with valid_status_codes [204] on generate_204).
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { REAL_PROBE_HOSTS_DENY, type SpawnedServer, spawnServer } from "@roadnerd/testkit";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProbeWorld, startProbeWorld } from "../../servers/network/test/helpers/probe-world.ts";
import { type Daemon, startDaemon, tempDir } from "./daemon.ts";

const ROUNDS = 3;

let world: ProbeWorld;
let blackbox: Daemon | undefined;
let ours: SpawnedServer | undefined;

beforeAll(async () => {
  world = await startProbeWorld();
  const dir = await tempDir("rn-blackbox-");
  const tls = { ca_file: world.certs.caFile };
  const theirs = {
    modules: {
      http_2xx: { prober: "http", timeout: "2s", http: { preferred_ip_protocol: "ip4", tls_config: tls } },
      http_204: {
        prober: "http",
        timeout: "2s",
        http: { preferred_ip_protocol: "ip4", valid_status_codes: [204], tls_config: tls },
      },
      tcp_connect: { prober: "tcp", timeout: "2s", tcp: { preferred_ip_protocol: "ip4" } },
      tls: { prober: "tcp", timeout: "2s", tcp: { preferred_ip_protocol: "ip4", tls: true, tls_config: tls } },
      dns: {
        prober: "dns",
        timeout: "2s",
        dns: { preferred_ip_protocol: "ip4", query_name: "host.example.test", query_type: "A" },
      },
    },
  };
  const mine = {
    modules: {
      http_2xx: { prober: "http", timeout: "2s" },
      tcp_connect: { prober: "tcp", timeout: "2s" },
      tls: { prober: "tcp", timeout: "2s", tcp: { tls: true } },
      dns: { prober: "dns", timeout: "2s", dns: { query_name: "host.example.test", query_type: "A" } },
      captive_portal: { prober: "captive_portal", timeout: "2s" },
    },
  };
  await writeFile(join(dir, "blackbox.yml"), JSON.stringify(theirs, null, 2));
  await writeFile(join(dir, "roadnerd.yml"), JSON.stringify(mine, null, 2));
  ours = await spawnServer("network", {
    env: {
      OUTBOUND_DENY: REAL_PROBE_HOSTS_DENY,
      NODE_EXTRA_CA_CERTS: world.certs.caFile,
      CAPTIVE_PROBES: world.captiveProbes,
      PROBE_CONFIG: join(dir, "roadnerd.yml"),
    },
  });
  blackbox = await startDaemon("prometheus-blackbox-exporter", dir, (port) => [
    `--config.file=${join(dir, "blackbox.yml")}`,
    `--web.listen-address=127.0.0.1:${port}`,
    "--log.level=warn",
  ]);
});

afterAll(async () => {
  await blackbox?.stop();
  await ours?.stop();
  await world?.close();
});

interface Probed {
  success: number;
  seconds: number;
}

async function probeAt(base: string | undefined, module: string, target: string): Promise<Probed> {
  const res = await request(`${base}/probe?module=${module}&target=${encodeURIComponent(target)}`);
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${base} ${module} ${target}: ${res.statusCode} ${text}`);
  const value = (name: string) =>
    Number(/^(\S+) (\S+)$/m.exec(text.split("\n").find((l) => l.startsWith(`${name} `)) ?? "")?.[2]);
  return { success: value("probe_success"), seconds: value("probe_duration_seconds") };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

interface Case {
  name: string;
  /** Module and target for each side (the captive case uses a different module on each). */
  ours: [string, string];
  theirs: [string, string];
  expected: 0 | 1;
}

const cases = (w: ProbeWorld): Case[] => {
  const same = (name: string, module: string, target: string, expected: 0 | 1): Case => ({
    name,
    ours: [module, target],
    theirs: [module, target],
    expected,
  });
  return [
    same("http healthy", "http_2xx", `${w.plain.url}/ok`, 1),
    same("https healthy", "http_2xx", `https://localhost:${w.valid.port}/ok`, 1),
    same("http refused", "http_2xx", `http://${w.refused}/`, 0),
    same("http slow (past 2 s)", "http_2xx", `${w.slow.url}/`, 0),
    same("https expired cert", "http_2xx", `https://localhost:${w.expired.port}/ok`, 0),
    same("https wrong name", "http_2xx", `https://localhost:${w.wrongName.port}/ok`, 0),
    same("tcp open", "tcp_connect", `127.0.0.1:${w.plain.port}`, 1),
    same("tcp refused", "tcp_connect", w.refused, 0),
    same("tls healthy", "tls", `localhost:${w.valid.port}`, 1),
    same("tls wrong name", "tls", `localhost:${w.wrongName.port}`, 0),
    same("dns answer", "dns", `127.0.0.1:${w.dns.port}`, 1),
    {
      name: "open network",
      ours: ["captive_portal", `${w.open.url}/generate_204`],
      theirs: ["http_204", `${w.open.url}/generate_204`],
      expected: 1,
    },
    {
      name: "captive portal",
      ours: ["captive_portal", `${w.portal.url}/generate_204`],
      theirs: ["http_204", `${w.portal.url}/generate_204`],
      expected: 0,
    },
  ];
};

describe("side by side with blackbox_exporter", () => {
  it("agrees on probe_success for every target both can judge; prints our time as a ratio of its", async () => {
    const rows: string[] = [];
    for (const c of cases(world)) {
      const mine: Probed[] = [];
      const theirs: Probed[] = [];
      // Alternate, so neither side always goes first on a warm target.
      for (let round = 0; round < ROUNDS; round++) {
        mine.push(await probeAt(ours?.url, ...c.ours));
        theirs.push(await probeAt(blackbox?.url, ...c.theirs));
      }
      expect({ case: c.name, ours: mine.map((p) => p.success) }).toEqual({
        case: c.name,
        ours: Array(ROUNDS).fill(c.expected),
      });
      expect({ case: c.name, theirs: theirs.map((p) => p.success) }).toEqual({
        case: c.name,
        theirs: Array(ROUNDS).fill(c.expected),
      });
      const a = median(mine.map((p) => p.seconds));
      const b = median(theirs.map((p) => p.seconds));
      rows.push(
        `| ${c.name} | ${c.expected} | ${(a * 1000).toFixed(1)} | ${(b * 1000).toFixed(1)} | ${(a / b).toFixed(2)} |`,
      );
    }
    process.stdout.write(
      `\nprobe_success and median probe_duration_seconds (ms), ${ROUNDS} rounds each:\n` +
        "| case | probe_success (both) | ours ms | blackbox ms | ours/blackbox |\n| --- | --- | --- | --- | --- |\n" +
        `${rows.join("\n")}\n`,
    );
  });
});
