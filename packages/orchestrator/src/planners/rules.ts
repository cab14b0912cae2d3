/**
 * The default planner: a deterministic decision procedure over tool results, no model. The symptom picks a
 * path (a port, the disk, a service, a proxy, the network: symptom.ts) or none (`unknown`, no call made); each
 * path reaches a label in three calls or fewer. Network: route_info (a way out? its link up?) → dns_resolve (names?) →
 * captive_portal_check (a portal, or nothing answering past the gateway?). Results are read through the
 * servers' own result types (results.ts); decisions are objects, checked by the loop like a model's reply.
 */
import type { Catalog } from "../catalog.ts";
import { DEFAULT_PROBE_HOST } from "../config.ts";
import type { Label } from "../labels.ts";
import { followNext } from "./follow-next.ts";
import { gatewaySilence, readAfter } from "./gateway-answers.ts";
import { RULES_TOOLS as T } from "./known-tools.ts";
import type { Decision, Planner, PlannerInput } from "./planner.ts";
import { latestResult } from "./results.ts";
import { notUnderstood, portOf, topicOf, unitOf } from "./symptom.ts";

/** Where the tests (and readers) have always found them. */
export { portOf, topicOf } from "./symptom.ts";

export interface RulesOptions {
  /** The name dns_resolve looks up (default example.com). */
  probeHost?: string;
}

const verdict = (label: Label, reason: string): Decision => ({ label, reason });

export class RulesPlanner implements Planner {
  readonly name = "rules";
  readonly #probeHost: string;

  constructor(options: RulesOptions = {}) {
    this.#probeHost = options.probeHost ?? DEFAULT_PROBE_HOST;
  }

  async next(input: PlannerInput): Promise<Decision> {
    const decided = this.#decide(input);
    // The budget is spent (`--budget 0`, or a path longer than it): these rules label only from what a tool
    // showed, so they say which call was missing rather than ask for it and fail as an invalid reply would.
    if (input.final && "tool" in decided)
      return verdict("unknown", `the step budget is spent before ${decided.tool}: these rules label from tool results`);
    // Where these rules end without a cause, the last result's own `next` (the server's knowledge) goes on.
    return "label" in decided && decided.label === "unknown" ? (followNext(input) ?? decided) : decided;
  }

  #decide(input: PlannerInput): Decision {
    for (const s of input.history) if (!s.ok) return verdict("unknown", `${s.tool} failed: ${s.error.code}`);
    switch (topicOf(input.symptom)) {
      case "port":
        return this.#port(input);
      case "disk":
        return this.#disk(input);
      case "service":
        return this.#service(input);
      case "proxy":
        return this.#proxy(input);
      case "unknown":
        return verdict("unknown", notUnderstood(input.symptom));
      default:
        return this.#network(input);
    }
  }

  /** Ask for `tool` unless the catalog lacks it (a server without that tool yet): then say so. */
  #need(catalog: Catalog, known: { id: string }, params: Record<string, unknown> = {}): Decision {
    return catalog.get(known.id) ? { tool: known.id, params } : verdict("unknown", `${known.id} is not available here`);
  }

  #port({ symptom, history, catalog }: PlannerInput): Decision {
    const port = portOf(symptom);
    const r = latestResult(history, T.whoUsesPort);
    if (!r) return this.#need(catalog, T.whoUsesPort, { port });
    if (r.pids.length === 0 && r.in_use) {
      return verdict("port_conflict", `port ${port} is already in use (by a socket no visible process owns)`);
    }
    if (r.pids.length === 0) return verdict("ok", `nothing holds port ${port}: it is free`);
    const who = r.pids.map((p) => `${p.process} (pid ${p.pid}${p.unit ? `, ${p.unit}` : ""})`).join(", ");
    return verdict("port_conflict", `port ${port} is already held by ${who}`);
  }

  #disk({ history, catalog }: PlannerInput): Decision {
    const r = latestResult(history, T.diskUsage);
    if (!r) return this.#need(catalog, T.diskUsage);
    const full = r.mounts.filter((m) => (m.used_pct ?? 0) >= T.DISK_FULL_PCT);
    if (full.length === 0) return verdict("ok", `no filesystem is ${T.DISK_FULL_PCT}% full`);
    return verdict("disk_full", full.map((m) => `${m.mount} is ${m.used_pct}% full`).join(", "));
  }

  #service({ symptom, history, catalog }: PlannerInput): Decision {
    const r = latestResult(history, T.listFailedUnits);
    if (!r) return this.#need(catalog, T.listFailedUnits);
    if (r.failed.length > 0) return verdict("service", `failed units: ${r.failed.map((u) => u.name).join(", ")}`);
    // None failed, but the symptom names a unit ("nginx keeps restarting" is activating, not failed): ask it.
    const unit = unitOf(symptom);
    if (!unit) return verdict("ok", "no failed units");
    const s = latestResult(history, T.serviceStatus);
    if (!s) return this.#need(catalog, T.serviceStatus, { name: unit });
    if (s.loaded === "not-found") return verdict("unknown", `no unit named ${s.name} here, and no unit has failed`);
    if (s.active === "active") return verdict("ok", `${s.name} is active (${s.sub}) and no unit has failed`);
    return verdict("service", `${s.name} is ${s.active} (${s.sub})${s.result ? `, last result ${s.result}` : ""}`);
  }

  #proxy({ history, catalog }: PlannerInput): Decision {
    const env = latestResult(history, T.proxyEnvStatus);
    if (!env) return this.#need(catalog, T.proxyEnvStatus);
    if (!env.http_proxy && !env.https_proxy) return verdict("unknown", "no proxy is configured; try a network triage");
    const t = latestResult(history, T.proxyConnectivityTest);
    if (!t) return this.#need(catalog, T.proxyConnectivityTest, { url: `http://${this.#probeHost}/` });
    if (t.error || (t.status !== undefined && t.status >= 400)) {
      const refused = t.proxy_status ? ` (the proxy answered ${t.proxy_status})` : "";
      return verdict(
        "proxy",
        `through the proxy: ${t.error ?? `status ${t.status}`}${refused}${t.detail ? `: ${t.detail}` : ""}`,
      );
    }
    return verdict("ok", "the proxy answers");
  }

  #network({ history, catalog, final }: PlannerInput): Decision {
    const route = latestResult(history, T.routeInfo);
    if (!route) return this.#need(catalog, T.routeInfo);
    const gw = route.default_gateway;
    if (gw?.linkdown) return verdict("wifi", `the default route's link ${gw.dev ?? "?"} has no carrier`);
    if (!gw) {
      const ifaces = latestResult(history, T.ifaceInfo);
      if (!ifaces) return this.#need(catalog, T.ifaceInfo);
      const live = ifaces.interfaces.filter((i) => i.name !== "lo" && i.up && i.carrier);
      if (live.length === 0) return verdict("wifi", "no interface is up with a carrier");
      const named = live.map((i) => `${i.name}${i.ipv4[0] ? ` ${i.ipv4[0]}` : ""}`).join(", ");
      return verdict("routing", `link up (${named}) but no default route`);
    }
    const dns = latestResult(history, T.dnsResolve);
    if (!dns) return this.#need(catalog, T.dnsResolve, { qname: this.#probeHost });
    if (dns.error || dns.answers.length === 0) {
      const why = `${dns.error ?? "no answer"}${dns.detail ? `: ${dns.detail}` : ""}`;
      const via = gw.via ?? gw.dev ?? "?";
      // The query made the kernel ask for the gateway's address, so with no entry before it one more route_info
      // reads the entry after it (nothing sent by us); when the budget is spent, the first read is all there is.
      const after = readAfter(history, T.routeInfo.id, T.dnsResolve.id);
      if (!after && !final && gw.neighbor === "none") return this.#need(catalog, T.routeInfo);
      const fails = `${this.#probeHost} does not resolve (${why})`;
      const silence = gatewaySilence(route, after, dns.resolver);
      if (silence) return verdict("routing", `the default gateway ${via} does not answer (${silence}), so ${fails}`);
      const way = gw.neighbor === "known" ? `the gateway ${via} has answered ARP` : `a route via ${via} is set`;
      return verdict("dns", `${way} but ${fails}`);
    }
    const portal = latestResult(history, T.captivePortalCheck);
    if (!portal) return this.#need(catalog, T.captivePortalCheck);
    if (portal.suspected) return verdict("captive_portal", portal.reason);
    if (portal.status === null) {
      return verdict("routing", `names resolve but nothing answers over HTTP past the gateway: ${portal.reason}`);
    }
    return verdict("ok", `route, DNS and HTTP all work: ${portal.reason}`);
  }
}
