/**
 * The spec's evaluation scenarios as real worlds in network namespaces. Each builds a "laptop" namespace
 * (where the orchestrator and the servers it attaches run) joined by a veth to an "upstream" namespace
 * (gateway, DNS server, web and portal hosts on documentation addresses). Nothing leaves the two.
 */
import { bootSystemd, type NetnsLab } from "@roadnerd/testkit";
import type { Label } from "../labels.ts";
import type { WorldSpec } from "./world-host.ts";

export const ADDR = {
  laptop: "198.51.100.2",
  gateway: "198.51.100.1",
  dns: "192.0.2.53",
  web: "203.0.113.10",
  login: "203.0.113.20",
  /** A forward proxy that answers 407. */
  proxy: "203.0.113.30",
  /** A proxy address where nothing listens (refused). */
  deadProxy: "203.0.113.31",
} as const;

export const PROXY_PORT = 3128;

export const PROBE_HOST = "example.com";

/** Env for the orchestrator in the laptop namespace: the network server's probes aim at the scenario's hosts. */
export const SCENARIO_ENV: Record<string, string> = {
  ROADNERD_PROBE_HOST: PROBE_HOST,
  CAPTIVE_TEST_URL: "http://plain.example/",
  CAPTIVE_PROBES: JSON.stringify([
    { url: "http://connectivity.example/generate_204", expect: 204 },
    { url: "http://connectivity.example/check_network_status.txt", expect: "NetworkManager is online" },
  ]),
};

const records = (web: string) =>
  ["example.com", "plain.example", "connectivity.example"].map((name) => ({
    name,
    type: "A" as const,
    ttl: 60,
    data: web,
  }));

export interface World {
  laptop: string;
  upstream: string;
  /** What runs in the upstream namespace (world-host), if anything. */
  upstreamSpec?: WorldSpec;
  /** What runs in the laptop namespace besides the orchestrator (port_conflict's squatter). */
  laptopSpec?: WorldSpec;
  /** The user's environment in this world, on top of SCENARIO_ENV (a proxy setting, what tools may reach). */
  env?: Record<string, string>;
}

/** What a world needs besides namespaces, made before its triages and undone after (a systemd, a full disk). */
export interface Extra {
  env?: Record<string, string>;
  /** Put before the orchestrator's argv inside the laptop namespace (a private mount namespace). */
  wrap?: string[];
  stop?(): Promise<void>;
}

export interface Scenario {
  name: string;
  symptom: string;
  expected: Label;
  /** Build the namespaces; the harness starts the world hosts and removes everything afterwards. */
  build(lab: NetnsLab): World;
  /** More than namespaces, in `tmp` (the run's own directory); the harness calls `stop` afterwards. */
  prepare?(tmp: string): Promise<Extra>;
  /** A small model's replies, with the mistakes 3B models make (fences, prose, near-miss names, bad params). */
  scripted: string[];
}

/** Laptop ⟷ upstream over wlan0/gw0, the laptop's resolver pointing at the upstream DNS address. */
function baseWorld(
  lab: NetnsLab,
  options: { carrier?: boolean; defaultRoute?: boolean; blackholeWeb?: boolean; gatewayAnswers?: boolean } = {},
): World {
  const laptop = lab.addNs();
  const upstream = lab.addNs();
  // Without the gateway's address on the far end, the link is up but nothing answers ARP for the gateway.
  const gwAddrs = (options.gatewayAnswers ?? true) ? [`${ADDR.gateway}/24`] : [];
  lab.veth(
    { ns: laptop, name: "wlan0", addrs: [`${ADDR.laptop}/24`], ipv6: "off" },
    { ns: upstream, name: "gw0", addrs: gwAddrs, ipv6: "off", up: options.carrier ?? true },
  );
  if (options.defaultRoute ?? true) lab.ip(laptop, "route", "add", "default", "via", ADDR.gateway, "dev", "wlan0");
  lab.ip(upstream, "addr", "add", `${ADDR.dns}/32`, "dev", "lo");
  if (options.blackholeWeb) {
    // Packets to the web vanish past the gateway: no answer, no ICMP (a firewall that drops).
    lab.ip(upstream, "route", "add", "blackhole", "203.0.113.0/24");
  } else {
    lab.ip(upstream, "addr", "add", `${ADDR.web}/32`, "dev", "lo");
    lab.ip(upstream, "addr", "add", `${ADDR.login}/32`, "dev", "lo");
  }
  lab.etcFile(laptop, "resolv.conf", `nameserver ${ADDR.dns}\n`);
  lab.etcFile(laptop, "hosts", "127.0.0.1 localhost\n");
  return { laptop, upstream };
}

const dnsAndWeb = (mode: "open" | "portal"): WorldSpec => ({
  dns: {
    host: ADDR.dns,
    records: [...records(ADDR.web), { name: "login.portal.example", type: "A", ttl: 60, data: ADDR.login }],
  },
  http: [
    { host: ADDR.web, port: 80, mode, login: "http://login.portal.example/login" },
    { host: ADDR.login, port: 80, mode: "page" },
  ],
});

/** A proxy world: the laptop's http_proxy points at `proxy`; the proxy server may reach it and the probe name. */
function proxyWorld(lab: NetnsLab, proxy: string, listening: boolean): World {
  const world = baseWorld(lab);
  lab.ip(world.upstream, "addr", "add", `${proxy}/32`, "dev", "lo");
  const url = `http://${proxy}:${PROXY_PORT}`;
  return {
    ...world,
    ...(listening ? { upstreamSpec: { http: [{ host: proxy, port: PROXY_PORT, mode: "proxy407" as const }] } } : {}),
    env: { http_proxy: url, https_proxy: url, OUTBOUND_ALLOW: `${proxy},${PROBE_HOST}` },
  };
}

/** A unit that fails at once, as a broken nginx does. */
const FAILED_UNIT = {
  name: "nginx.service",
  body: "[Unit]\nDescription=nginx (evaluation stand-in that fails)\n[Service]\nType=oneshot\nExecStart=/bin/false",
};

/** A real systemd (testkit's harness, never the host's) with the failed unit; the service server pointed at it. */
async function failedUnitWorld(): Promise<Extra> {
  const harness = await bootSystemd({ units: [FAILED_UNIT] });
  try {
    await harness.waitFor(
      "nginx.service failed",
      () => harness.run(["systemctl", "is-failed", FAILED_UNIT.name]).stdout.trim() === "failed",
    );
    const bin = harness.binariesInside(["systemctl", "journalctl"]);
    return {
      env: { EXEC_PATH: bin, SYSTEMD_BOOTED_DIR: harness.path("/run/systemd/system") },
      stop: () => harness.stop(),
    };
  } catch (err) {
    await harness.stop();
    throw err;
  }
}

/**
 * A full filesystem: a 1 MiB tmpfs filled to the last block, mounted in a private mount namespace the triage
 * (and every server it attaches) runs in, so nothing else on the machine sees it.
 */
async function fullDisk(tmp: string): Promise<Extra> {
  const dir = `${tmp}/full`;
  const script = [
    `mkdir -p '${dir}'`,
    `mount -t tmpfs -o size=1m,mode=700 rn-eval-full '${dir}'`,
    `(head -c 2097152 /dev/zero > '${dir}/fill' 2>/dev/null || true)`,
    'exec "$@"',
  ].join(" && ");
  return { wrap: ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "full-disk"] };
}

export const SCENARIOS: readonly Scenario[] = [
  {
    name: "wifi_basic",
    symptom: "wifi shows connected but nothing loads",
    expected: "wifi",
    build: (lab) => ({ ...baseWorld(lab, { carrier: false }) }),
    scripted: [
      '```json\n{"tool":"network/route_info","params":{}}\n```',
      '{"tool":"network/route_info","params":{}}',
      '{"label":"wifi","reason":"the default route link has no carrier"}',
    ],
  },
  {
    name: "dns_basic",
    symptom: "websites do not load, but the network icon says connected",
    expected: "dns",
    // The resolver's address is there (routing works) but nothing answers DNS on it.
    build: (lab) => ({ ...baseWorld(lab) }),
    scripted: [
      '{"tool":"route_info","params":{}}',
      'Sure. {"tool":"dns/resolve","params":{"qname":"example.com"}}',
      '{"tool":"dns/resolve","params":{"qname":"example.com"}}',
      '{"label":"dns","reason":"gateway fine, example.com does not resolve"}',
    ],
  },
  {
    name: "gateway_dead",
    symptom: "connected but nothing works",
    expected: "routing",
    // A new user's review: the default route points at an address nothing holds, the resolver is off-link; the
    // DNS query makes the laptop's kernel ask for the gateway and nobody answers.
    build: (lab) => ({ ...baseWorld(lab, { gatewayAnswers: false }), upstreamSpec: dnsAndWeb("open") }),
    scripted: [
      '{"tool":"network/route_info","params":{}}',
      '{"tool":"network/dns_resolve","params":{"qname":"example.com"}}',
      '{"tool":"network/route_info","params":{}}',
      '{"label":"routing","reason":"the gateway has not answered ARP"}',
    ],
  },
  {
    name: "iface_up_no_net",
    symptom: "no internet",
    expected: "routing",
    build: (lab) => ({ ...baseWorld(lab, { defaultRoute: false }), upstreamSpec: dnsAndWeb("open") }),
    scripted: [
      '{"tool":"network/route_info","params":{}}',
      '{"tool":"network.iface_info","params":{}}',
      '{"label":"routing","reason":"wlan0 is up with an address but there is no default route"}',
    ],
  },
  {
    name: "ambiguous_inet",
    symptom: "some things work, browsing hangs",
    expected: "routing",
    build: (lab) => ({ ...baseWorld(lab, { blackholeWeb: true }), upstreamSpec: { dns: dnsAndWeb("open").dns } }),
    scripted: [
      '{"tool":"network/dns_resolve","params":{}}',
      '{"tool":"network/dns_resolve","params":{"qname":"example.com"}}',
      '{"tool":"network/http_check","params":{"url":"http://example.com/","timeout_ms":1500}}',
      '{"label":"routing","reason":"DNS answers but HTTP to the outside times out"}',
    ],
  },
  {
    name: "port_conflict_8080",
    symptom: "my dev server fails: port 8080 already in use",
    expected: "port_conflict",
    build: (lab) => ({
      ...baseWorld(lab),
      laptopSpec: { http: [{ host: "127.0.0.1", port: 8080, mode: "page" }] },
    }),
    scripted: [
      '{"tool":"ports/who_uses_port","params":{"port":"8080"}}',
      '{"tool":"ports/who_uses_port","params":{"port":8080}}',
      '{"label":"port_conflict","reason":"another process listens on 8080"}',
    ],
  },
  {
    name: "captive_portal",
    symptom: "hotel wifi connected, pages do not open",
    expected: "captive_portal",
    build: (lab) => ({ ...baseWorld(lab), upstreamSpec: dnsAndWeb("portal") }),
    scripted: [
      '{"tool":"network/captive_portal_check","params":{}}\n{"tool":"network/route_info","params":{}}',
      '{"tool":"network/captive_portal_check","params":{}}',
      '{"label":"captive_portal","reason":"every probe is redirected to a login page"}',
    ],
  },
  {
    name: "proxy_407",
    symptom: "apps fail behind the corporate proxy",
    expected: "proxy",
    build: (lab) => proxyWorld(lab, ADDR.proxy, true),
    scripted: [
      '{"tool":"proxy/proxy_env_status","params":{}}',
      '{"tool":"proxy_connectivity_test","params":{"url":"example.com"}}',
      '{"tool":"proxy/proxy_connectivity_test","params":{"url":"http://example.com/"}}',
      '{"label":"proxy","reason":"the proxy answers 407: it wants credentials"}',
    ],
  },
  {
    name: "proxy_dead",
    symptom: "nothing loads through the proxy",
    expected: "proxy",
    build: (lab) => proxyWorld(lab, ADDR.deadProxy, false),
    scripted: [
      'I will check the proxy. {"tool":"proxy/proxy_env_status","params":{}}',
      '{"tool":"proxy/proxy_env_status","params":{}}',
      '{"tool":"proxy/proxy_connectivity_test","params":{"url":"http://example.com/"}}',
      '{"label":"proxy","reason":"the proxy refuses connections"}',
    ],
  },
  {
    name: "service_failed",
    symptom: "nginx won't start",
    expected: "service",
    build: (lab) => baseWorld(lab),
    prepare: () => failedUnitWorld(),
    scripted: [
      '{"tool":"service/list_failed_units"}',
      '{"tool":"service/list_failed_units","params":{}}',
      '{"label":"service","reason":"nginx.service has failed"}',
    ],
  },
  {
    name: "disk_full",
    symptom: "disk_full",
    expected: "disk_full",
    build: (lab) => baseWorld(lab),
    prepare: (tmp) => fullDisk(tmp),
    scripted: [
      '{"tool":"storage/disk_usage","params":{"limit":"50"}}',
      '{"tool":"storage/disk_usage","params":{"limit":50}}',
      '{"label":"disk_full","reason":"a filesystem is 100% full"}',
    ],
  },
  {
    name: "port_conflict_5432",
    symptom: "postgres won't start: port 5432 already in use",
    expected: "port_conflict",
    build: (lab) => ({
      ...baseWorld(lab),
      laptopSpec: { http: [{ host: "127.0.0.1", port: 5432, mode: "page" }] },
    }),
    scripted: [
      '{"tool":"ports/who_uses_port","params":{"port":5432}}',
      '{"label":"port_conflict","reason":"another process listens on 5432"}',
    ],
  },
  {
    name: "healthy",
    symptom: "is my internet ok?",
    expected: "ok",
    build: (lab) => ({ ...baseWorld(lab), upstreamSpec: dnsAndWeb("open") }),
    scripted: [
      '{"tool":"network/route_info","params":{}}',
      '{"tool":"network/dns_resolve","params":{"qname":"example.com"}}',
      '{"tool":"network/captive_portal_check","params":{}}',
      '{"label":"ok","reason":"route, DNS and HTTP all work"}',
    ],
  },
];
