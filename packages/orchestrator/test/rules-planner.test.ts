/**
 * The rules planner's decision procedure on result shapes the servers return (the network and ports paths
 * also run against real worlds in eval.links.test.ts): topics from symptoms, the port in a symptom, every branch
 * to a label in ≤ 3 calls, and a missing tool said plainly instead of guessed.
 */
import { loadServer, readRegistry } from "@roadnerd/registry";
import { beforeAll, describe, expect, it } from "vitest";
import { type Catalog, catalogFrom } from "../src/catalog.ts";
import { parseReply } from "../src/parse-reply.ts";
import { RULES_TOOLS } from "../src/planners/known-tools.ts";
import type { StepRecord } from "../src/planners/planner.ts";
import { portOf, RulesPlanner, topicOf } from "../src/planners/rules.ts";
import {
  diskResult,
  dnsResult,
  failedUnitsResult,
  ifaceResult,
  portalResult,
  portResult,
  routeResult,
} from "./result-fixtures.ts";

let catalog: Catalog;
let networkOnly: Catalog;
const planner = new RulesPlanner({ probeHost: "example.com" });

beforeAll(async () => {
  const servers = readRegistry();
  const tools = new Map(
    await Promise.all(servers.map(async (s) => [s.name, (await loadServer(s.name)).tools] as const)),
  );
  catalog = catalogFrom(servers, tools);
  networkOnly = catalogFrom(
    servers.filter((s) => s.name === "network"),
    tools,
  );
});

const step = (tool: string, result: Record<string, unknown>, n = 1): StepRecord => ({
  step: n,
  tool,
  params: {},
  ok: true,
  result,
});
const next = async (symptom: string, history: StepRecord[], cat = catalog, final = false) => {
  const reply = await planner.next({ symptom, catalog: cat, history, final });
  // Whatever the rules say must pass the same strict parser as a model's reply.
  const parsed = parseReply(reply, cat);
  expect(parsed.kind).not.toBe("invalid");
  return parsed;
};

describe("typed results", () => {
  it("reads the tools the servers define: each id is in the catalog with the very output schema it imports", () => {
    const known = Object.values(RULES_TOOLS).filter((t) => typeof t === "object");
    expect(known).toHaveLength(10);
    for (const t of known) expect(catalog.get(t.id)?.definition.outputSchema).toBe(t.output);
  });

  it("answers a decision object, not JSON text to parse back", async () => {
    expect(await planner.next({ symptom: "no internet", catalog, history: [] })).toEqual({
      tool: "network/route_info",
      params: {},
    });
  });

  it("a result outside its server's schema is refused by name, never read as if it fit", async () => {
    const bad = step("network/route_info", { default_gateway: "192.0.2.1", summary: "x" });
    await expect(planner.next({ symptom: "", catalog, history: [bad] })).rejects.toThrow(
      /network\/route_info answered outside its own result schema \(default_gateway/,
    );
  });
});

describe("symptom topics", () => {
  it.each([
    ["port 8080 already in use", "port"],
    ["EADDRINUSE when starting the app", "port"],
    ["No space left on device", "disk"],
    ["disk is full", "disk"],
    ["NetworkManager service failed to start", "service"],
    ["corporate proxy blocks the SSO page", "proxy"],
    ["no internet", "network"],
    ["", "network"],
  ])("%s → %s", (symptom, topic) => {
    expect(topicOf(symptom)).toBe(topic);
  });

  it("the port a symptom names, else the spec's 8080", () => {
    expect(portOf("port 3000 already in use")).toBe(3000);
    expect(portOf("listen EADDRINUSE: address already in use :::5173")).toBe(5173);
    expect(portOf("address already in use")).toBe(8080);
    expect(portOf("port 99999")).toBe(8080);
  });
});

describe("network path", () => {
  it("route_info first; a linkdown default route is wifi", async () => {
    expect(await next("no internet", [])).toMatchObject({
      kind: "call",
      call: { id: "network/route_info", params: {} },
    });
    const gw = { via: "192.0.2.1", dev: "wlan0", linkdown: true };
    expect(await next("", [step("network/route_info", routeResult(gw))])).toEqual({
      kind: "label",
      label: "wifi",
      reason: "the default route's link wlan0 has no carrier",
    });
  });

  it("a good route then dns_resolve of the probe host; a failure is dns", async () => {
    const route = step("network/route_info", routeResult({ via: "192.0.2.1", dev: "wlan0", linkdown: false }));
    expect(await next("", [route])).toMatchObject({
      kind: "call",
      call: { id: "network/dns_resolve", params: { qname: "example.com" } },
    });
    const dns = step("network/dns_resolve", dnsResult([], { error: "E_DNS_FAIL", detail: "TIMEOUT" }), 2);
    expect(await next("", [route, dns])).toEqual({
      kind: "label",
      label: "dns",
      reason: "the gateway 192.0.2.1 has answered ARP but example.com does not resolve (E_DNS_FAIL: TIMEOUT)",
    });
  });

  // A new user's review: a veth going nowhere, the default route via 192.168.77.1 (nothing answers there), the
  // resolver off-link; the rules said "dns: route via 192.168.77.1 is fine but example.com does not resolve".
  describe("a gateway that does not answer (its ARP entry after the DNS query)", () => {
    const gwAt = (neighbor: "known" | "incomplete" | "none", n: number, onLink = ["192.168.77.0/24"]) =>
      step(
        "network/route_info",
        routeResult({ via: "192.168.77.1", dev: "wlan0", linkdown: false, neighbor }, onLink),
        n,
      );
    const failed = (resolver = "192.0.2.53") =>
      step("network/dns_resolve", dnsResult([], { error: "E_DNS_FAIL", detail: "TIMEOUT" }, resolver), 2);

    it("no entry before the query: route_info once more (the third call), incomplete after it is routing", async () => {
      expect(await next("", [gwAt("none", 1), failed()])).toMatchObject({
        kind: "call",
        call: { id: "network/route_info", params: {} },
      });
      expect(await next("", [gwAt("none", 1), failed(), gwAt("incomplete", 3)])).toEqual({
        kind: "label",
        label: "routing",
        reason:
          "the default gateway 192.168.77.1 does not answer (no link-layer address: ARP incomplete), so example.com does not resolve (E_DNS_FAIL: TIMEOUT)",
      });
    });

    it("still no entry after a query that had to go through the gateway is routing", async () => {
      expect(await next("", [gwAt("none", 1), failed(), gwAt("none", 3)])).toMatchObject({
        label: "routing",
        reason: expect.stringMatching(
          /^the default gateway 192\.168\.77\.1 does not answer \(no link-layer address: no ARP entry after a DNS query to 192\.0\.2\.53 through it\)/,
        ),
      });
    });

    it("no entry is no evidence when the resolver is not behind the gateway (on-link, loopback)", async () => {
      const onLink = (await next("", [gwAt("none", 1), failed("192.168.77.53"), gwAt("none", 3)])) as {
        label?: string;
        reason?: string;
      };
      expect(onLink).toMatchObject({ label: "dns" });
      expect(onLink.reason).toBe(
        "a route via 192.168.77.1 is set but example.com does not resolve (E_DNS_FAIL: TIMEOUT)",
      );
      expect(await next("", [gwAt("none", 1), failed("127.0.0.53"), gwAt("none", 3)])).toMatchObject({
        label: "dns",
      });
    });

    it("the gateway answered after the query: dns, and nothing calls an untested route fine", async () => {
      const r = await next("", [gwAt("none", 1), failed(), gwAt("known", 3)]);
      expect(r).toEqual({
        kind: "label",
        label: "dns",
        reason: "the gateway 192.168.77.1 has answered ARP but example.com does not resolve (E_DNS_FAIL: TIMEOUT)",
      });
    });

    it("an incomplete entry already in the first read is routing without another call", async () => {
      expect(await next("", [gwAt("incomplete", 1), failed()])).toMatchObject({ kind: "label", label: "routing" });
    });

    it("budget spent after two calls: the first read decides, and no entry before the query is no evidence", async () => {
      expect(await next("", [gwAt("none", 1), failed()], catalog, true)).toEqual({
        kind: "label",
        label: "dns",
        reason: "a route via 192.168.77.1 is set but example.com does not resolve (E_DNS_FAIL: TIMEOUT)",
      });
      expect(await next("", [gwAt("incomplete", 1), failed()], catalog, true)).toMatchObject({ label: "routing" });
    });
  });

  it("names resolve: the captive check decides portal, dead HTTP (routing) or ok", async () => {
    const route = step("network/route_info", routeResult({ via: "192.0.2.1", dev: "wlan0", linkdown: false }));
    const dns = step("network/dns_resolve", dnsResult(["192.0.2.80"]), 2);
    expect(await next("", [route, dns])).toMatchObject({ kind: "call", call: { id: "network/captive_portal_check" } });
    const portal = (r: Parameters<typeof portalResult>[0]) =>
      next("", [route, dns, step("network/captive_portal_check", portalResult(r), 3)]);
    expect(await portal({ suspected: true, status: 302, reason: "redirected to login" })).toMatchObject({
      label: "captive_portal",
      reason: "redirected to login",
    });
    expect(await portal({ suspected: false, status: null, reason: "no answer" })).toMatchObject({ label: "routing" });
    expect(await portal({ suspected: false, status: 204, reason: "all probes matched" })).toMatchObject({
      label: "ok",
    });
  });

  it("no default route: iface_info tells wifi (no carrier) from routing (link up)", async () => {
    const route = step("network/route_info", routeResult(null));
    expect(await next("", [route])).toMatchObject({ kind: "call", call: { id: "network/iface_info" } });
    const ifaces = (up: boolean, carrier: boolean) =>
      step(
        "network/iface_info",
        ifaceResult([
          { name: "lo", up: true, carrier: true, ipv4: ["127.0.0.1/8"] },
          { name: "wlan0", up, carrier, ipv4: ["198.51.100.2/24"] },
        ]),
        2,
      );
    expect(await next("", [route, ifaces(true, false)])).toMatchObject({ label: "wifi" });
    expect(await next("", [route, ifaces(true, true)])).toEqual({
      kind: "label",
      label: "routing",
      reason: "link up (wlan0 198.51.100.2/24) but no default route",
    });
  });

  it("a failed call ends with unknown and the code", async () => {
    const failed: StepRecord = {
      step: 1,
      tool: "network/route_info",
      params: {},
      ok: false,
      error: { code: "E_ATTACH", message: "x" },
    };
    expect(await next("", [failed])).toEqual({
      kind: "label",
      label: "unknown",
      reason: "network/route_info failed: E_ATTACH",
    });
  });
});

describe("other paths", () => {
  it("port: who_uses_port with the symptom's port; holders → port_conflict, none → ok", async () => {
    expect(await next("port 3000 already in use", [])).toMatchObject({
      kind: "call",
      call: { id: "ports/who_uses_port", params: { port: 3000 } },
    });
    const held = step("ports/who_uses_port", portResult(3000, [{ pid: 42, process: "node", unit: "dev.service" }]));
    expect(await next("port 3000 already in use", [held])).toEqual({
      kind: "label",
      label: "port_conflict",
      reason: "port 3000 is already held by node (pid 42, dev.service)",
    });
    const free = step("ports/who_uses_port", portResult(3000, []));
    expect(await next("port 3000 already in use", [free])).toMatchObject({ label: "ok" });
  });

  it("disk: disk_usage; a mount ≥ 95% is disk_full", async () => {
    expect(await next("no space left on device", [])).toMatchObject({ call: { id: "storage/disk_usage" } });
    const usage = step(
      "storage/disk_usage",
      diskResult([
        { mount: "/", used_pct: 97 },
        { mount: "/boot", used_pct: 40 },
      ]),
    );
    expect(await next("no space left on device", [usage])).toEqual({
      kind: "label",
      label: "disk_full",
      reason: "/ is 97% full",
    });
  });

  it("service: list_failed_units; a failed unit is service", async () => {
    expect(await next("a service failed to start", [])).toMatchObject({ call: { id: "service/list_failed_units" } });
    const failed = step("service/list_failed_units", failedUnitsResult(["NetworkManager.service"]));
    expect(await next("a service failed to start", [failed])).toEqual({
      kind: "label",
      label: "service",
      reason: "failed units: NetworkManager.service",
    });
  });

  it("a path whose server lacks the tool says so instead of guessing", async () => {
    expect(await next("port 8080 already in use", [], networkOnly)).toEqual({
      kind: "label",
      label: "unknown",
      reason: "ports/who_uses_port is not available here",
    });
  });
});
