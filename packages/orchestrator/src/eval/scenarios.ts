/**
 * The spec's evaluation scenarios as real worlds in network namespaces. Each builds a "laptop" namespace
 * (where the orchestrator and the servers it attaches run) joined by a veth to an "upstream" namespace
 * (gateway, DNS server, web and portal hosts on documentation addresses). Nothing leaves the two.
 */
import type { NetnsLab } from "@roadnerd/testkit";
import type { Label } from "../labels.ts";
import type { WorldSpec } from "./world-host.ts";

export const ADDR = {
  laptop: "198.51.100.2",
  gateway: "198.51.100.1",
  dns: "192.0.2.53",
  web: "203.0.113.10",
  login: "203.0.113.20",
} as const;

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
}

export interface Scenario {
  name: string;
  symptom: string;
  expected: Label;
  /** Build the namespaces; the harness starts the world hosts and removes everything afterwards. */
  build(lab: NetnsLab): World;
  /** A small model's replies, with the mistakes 3B models make (fences, prose, near-miss names, bad params). */
  scripted: string[];
}

/** Laptop ⟷ upstream over wlan0/gw0, the laptop's resolver pointing at the upstream DNS address. */
function baseWorld(
  lab: NetnsLab,
  options: { carrier?: boolean; defaultRoute?: boolean; blackholeWeb?: boolean } = {},
): World {
  const laptop = lab.addNs();
  const upstream = lab.addNs();
  lab.veth(
    { ns: laptop, name: "wlan0", addrs: [`${ADDR.laptop}/24`], ipv6: "off" },
    { ns: upstream, name: "gw0", addrs: [`${ADDR.gateway}/24`], ipv6: "off", up: options.carrier ?? true },
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
];
