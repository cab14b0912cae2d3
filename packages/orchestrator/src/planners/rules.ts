/**
 * The default planner: a deterministic decision procedure over tool results, no model. The symptom picks
 * a path (a port, the disk, a service, a proxy, else the network); each path reaches a label in three
 * calls or fewer. Network: route_info (a way out? its link up?) → dns_resolve (names?) →
 * captive_portal_check (a portal, or nothing answering past the gateway?).
 */
import type { Catalog } from "../catalog.ts";
import { DEFAULT_PROBE_HOST } from "../config.ts";
import type { Label } from "../labels.ts";
import type { Planner, PlannerInput, StepRecord } from "./planner.ts";

type Topic = "port" | "disk" | "service" | "proxy" | "network";

export interface RulesOptions {
  /** The name dns_resolve looks up (default example.com). */
  probeHost?: string;
}

const DISK_FULL_PCT = 95;

export function topicOf(symptom: string): Topic {
  if (/\bport\b|eaddrinuse|address already in use|already in use/i.test(symptom)) return "port";
  if (/\bdisk\b|no space|space left|enospc|\bfull\b|storage/i.test(symptom)) return "disk";
  if (/\bproxy\b|\bsso\b|\bidp\b/i.test(symptom)) return "proxy";
  if (/\bservice\b|\bunit\b|systemd|daemon|failed to start/i.test(symptom)) return "service";
  return "network";
}

/** The port a symptom names (default 8080, the spec's scenario). */
export function portOf(symptom: string): number {
  const m = /\b(?:port\s*:?\s*|:)(\d{1,5})\b/i.exec(symptom) ?? /\b(\d{2,5})\b/.exec(symptom);
  const n = Number(m?.[1]);
  return Number.isInteger(n) && n >= 1 && n <= 65535 ? n : 8080;
}

const call = (tool: string, params: Record<string, unknown> = {}) => JSON.stringify({ tool, params });
const verdict = (label: Label, reason: string) => JSON.stringify({ label, reason });

type Result = Record<string, unknown>;
const resultOf = (history: readonly StepRecord[], tool: string): StepRecord | undefined =>
  [...history].reverse().find((s) => s.tool === tool);

export class RulesPlanner implements Planner {
  readonly name = "rules";
  readonly #probeHost: string;

  constructor(options: RulesOptions = {}) {
    this.#probeHost = options.probeHost ?? DEFAULT_PROBE_HOST;
  }

  async next(input: PlannerInput): Promise<string> {
    const failed = input.history.find((s) => !s.ok);
    if (failed) return verdict("unknown", `${failed.tool} failed: ${failed.error?.code ?? "error"}`);
    switch (topicOf(input.symptom)) {
      case "port":
        return this.#port(input);
      case "disk":
        return this.#disk(input);
      case "service":
        return this.#service(input);
      case "proxy":
        return this.#proxy(input);
      default:
        return this.#network(input);
    }
  }

  /** Ask for `tool` unless the catalog lacks it (a server without that tool yet): then say so. */
  #need(catalog: Catalog, tool: string, params: Record<string, unknown> = {}): string {
    return catalog.get(tool) ? call(tool, params) : verdict("unknown", `${tool} is not available here`);
  }

  #port({ symptom, history, catalog }: PlannerInput): string {
    const port = portOf(symptom);
    const step = resultOf(history, "ports/who_uses_port");
    if (!step) return this.#need(catalog, "ports/who_uses_port", { port });
    const r = step.result as Result;
    const pids = (r.pids ?? []) as Array<{ pid: number; process?: string; unit?: string }>;
    if (pids.length === 0 && r.in_use === true) {
      return verdict("port_conflict", `port ${port} is already in use (by a socket no visible process owns)`);
    }
    if (pids.length === 0) return verdict("ok", `nothing holds port ${port}: it is free`);
    const who = pids.map((p) => `${p.process ?? "?"} (pid ${p.pid}${p.unit ? `, ${p.unit}` : ""})`).join(", ");
    return verdict("port_conflict", `port ${port} is already held by ${who}`);
  }

  #disk({ history, catalog }: PlannerInput): string {
    const step = resultOf(history, "storage/disk_usage");
    if (!step) return this.#need(catalog, "storage/disk_usage");
    const mounts = ((step.result as Result).mounts ?? []) as Array<{ mount: string; used_pct: number }>;
    const full = mounts.filter((m) => m.used_pct >= DISK_FULL_PCT);
    if (full.length === 0) return verdict("ok", `no filesystem is ${DISK_FULL_PCT}% full`);
    return verdict("disk_full", full.map((m) => `${m.mount} is ${m.used_pct}% full`).join(", "));
  }

  #service({ history, catalog }: PlannerInput): string {
    const step = resultOf(history, "service/list_failed_units");
    if (!step) return this.#need(catalog, "service/list_failed_units");
    const failed = ((step.result as Result).failed ?? []) as Array<{ name: string }>;
    if (failed.length === 0) return verdict("ok", "no failed units");
    return verdict("service", `failed units: ${failed.map((u) => u.name).join(", ")}`);
  }

  #proxy({ history, catalog }: PlannerInput): string {
    const env = resultOf(history, "proxy/proxy_env_status");
    if (!env) return this.#need(catalog, "proxy/proxy_env_status");
    const r = env.result as Result;
    if (!r.http_proxy && !r.https_proxy) return verdict("unknown", "no proxy is configured; try a network triage");
    const test = resultOf(history, "proxy/proxy_connectivity_test");
    if (!test) return this.#need(catalog, "proxy/proxy_connectivity_test", { url: `http://${this.#probeHost}/` });
    const t = test.result as Result;
    if (t.error || (typeof t.status === "number" && t.status >= 400)) {
      return verdict("proxy", `through the proxy: ${String(t.error ?? `status ${t.status}`)}`);
    }
    return verdict("ok", "the proxy answers");
  }

  #network({ history, catalog }: PlannerInput): string {
    const route = resultOf(history, "network/route_info");
    if (!route) return this.#need(catalog, "network/route_info");
    const gw = (route.result as Result).default_gateway as {
      via: string | null;
      dev: string | null;
      linkdown: boolean;
    } | null;
    if (gw?.linkdown) return verdict("wifi", `the default route's link ${gw.dev ?? "?"} has no carrier`);
    if (!gw) {
      const ifaces = resultOf(history, "network/iface_info");
      if (!ifaces) return this.#need(catalog, "network/iface_info");
      const list = ((ifaces.result as Result).interfaces ?? []) as Array<{
        name: string;
        up: boolean;
        carrier: boolean;
        ipv4: string[];
      }>;
      const live = list.filter((i) => i.name !== "lo" && i.up && i.carrier);
      if (live.length === 0) return verdict("wifi", "no interface is up with a carrier");
      const named = live.map((i) => `${i.name}${i.ipv4[0] ? ` ${i.ipv4[0]}` : ""}`).join(", ");
      return verdict("routing", `link up (${named}) but no default route`);
    }
    const dns = resultOf(history, "network/dns_resolve");
    if (!dns) return this.#need(catalog, "network/dns_resolve", { qname: this.#probeHost });
    const d = dns.result as Result;
    const answers = (d.answers ?? []) as unknown[];
    if (d.error || answers.length === 0) {
      return verdict(
        "dns",
        `route via ${gw.via ?? gw.dev} is fine but ${this.#probeHost} does not resolve (${String(d.error ?? "no answer")}${d.detail ? `: ${String(d.detail)}` : ""})`,
      );
    }
    const portal = resultOf(history, "network/captive_portal_check");
    if (!portal) return this.#need(catalog, "network/captive_portal_check");
    const p = portal.result as Result;
    if (p.suspected) return verdict("captive_portal", String(p.reason ?? "a captive portal answers"));
    if (p.status === null || p.status === undefined) {
      return verdict(
        "routing",
        `names resolve but nothing answers over HTTP past the gateway: ${String(p.reason ?? "")}`,
      );
    }
    return verdict("ok", `route, DNS and HTTP all work: ${String(p.reason ?? "")}`);
  }
}
