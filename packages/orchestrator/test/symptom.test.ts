/**
 * Symptom recognition (src/planners/symptom.ts): the label words pick their own path, "<unit> won't start /
 * keeps restarting" is a service, and what the rules do not understand is `unknown`, said so with no call made.
 * Regressions: "nginx won't start" gave wifi; `--symptom disk_full` ran network/route_info.
 */
import { readRegistry } from "@roadnerd/registry";
import { beforeAll, describe, expect, it } from "vitest";
import { type Catalog, loadCatalog } from "../src/catalog.ts";
import type { StepRecord } from "../src/planners/planner.ts";
import { RulesPlanner } from "../src/planners/rules.ts";
import { topicOf, unitOf } from "../src/planners/symptom.ts";
import { failedUnitsResult } from "./result-fixtures.ts";

describe("symptom topics", () => {
  it.each([
    // The label words themselves.
    ["disk_full", "disk"],
    ["port_conflict", "port"],
    ["dns", "network"],
    ["proxy", "proxy"],
    ["service", "service"],
    ["wifi", "network"],
    ["routing", "network"],
    ["captive_portal", "network"],
    // A unit that will not start or keeps restarting.
    ["nginx won't start", "service"],
    ["nginx won’t start", "service"],
    ["postgresql keeps restarting", "service"],
    ["docker fails to start after the update", "service"],
    ["my dev server won't start: port 3000 already in use", "port"],
    // The spec's scenarios keep their paths.
    ["wifi shows connected but nothing loads", "network"],
    ["websites do not load, but the network icon says connected", "network"],
    ["some things work, browsing hangs", "network"],
    ["hotel wifi connected, pages do not open", "network"],
    ["the proxy answers 407", "proxy"],
    ["", "network"],
    // Nothing the rules know.
    ["my laptop is slow", "unknown"],
    ["laptop is slow", "unknown"],
    ["the screen flickers", "unknown"],
  ])("%s → %s", (symptom, topic) => {
    expect(topicOf(symptom)).toBe(topic);
  });

  it("the unit a symptom names", () => {
    expect(unitOf("nginx won't start")).toBe("nginx");
    expect(unitOf("why does rn-broken.service fail")).toBe("rn-broken.service");
    expect(unitOf("postgresql keeps restarting")).toBe("postgresql");
    expect(unitOf("it won't start")).toBeUndefined();
    expect(unitOf("no internet")).toBeUndefined();
  });
});

describe("the rules planner on what it does not understand", () => {
  let catalog: Catalog;
  beforeAll(async () => {
    catalog = await loadCatalog(readRegistry());
  });

  it("answers unknown at once, with what it read, and calls nothing", async () => {
    const reply = await new RulesPlanner().next({ symptom: "my laptop is slow", catalog, history: [] });
    expect(reply).toMatchObject({ label: "unknown" });
    expect("reason" in reply && reply.reason).toContain("(my laptop is slow) names no network, port, disk");
  });

  it.each([
    ["disk_full", "storage/disk_usage"],
    ["port_conflict", "ports/who_uses_port"],
    ["nginx won't start", "service/list_failed_units"],
    ["proxy", "proxy/proxy_env_status"],
    ["dns", "network/route_info"],
  ])("%s → first call %s", async (symptom, tool) => {
    expect(await new RulesPlanner().next({ symptom, catalog, history: [] })).toMatchObject({ tool });
  });
});

describe("the service path with a named unit", () => {
  let catalog: Catalog;
  beforeAll(async () => {
    catalog = await loadCatalog(readRegistry());
  });
  const step = (n: number, tool: string, result: Record<string, unknown>): StepRecord => ({
    step: n,
    tool,
    params: {},
    ok: true,
    result,
  });
  const noneFailed = step(1, "service/list_failed_units", { ...failedUnitsResult([]) });
  const status = (active: string, sub: string, loaded = "loaded"): StepRecord =>
    step(2, "service/service_status", {
      name: "nginx.service",
      loaded,
      active,
      sub,
      since: null,
      description: "nginx",
      result: active === "active" ? "success" : "exit-code",
      unit_file_state: "enabled",
      summary: "nginx",
    });
  const next = (history: StepRecord[]) =>
    new RulesPlanner().next({ symptom: "nginx keeps restarting", catalog, history });

  it("no failed unit: asks service_status of the unit the symptom names", async () => {
    expect(await next([noneFailed])).toEqual({ tool: "service/service_status", params: { name: "nginx" } });
  });

  it("restarting (activating auto-restart) is service; active is ok; no such unit is unknown", async () => {
    expect(await next([noneFailed, status("activating", "auto-restart")])).toEqual({
      label: "service",
      reason: "nginx.service is activating (auto-restart), last result exit-code",
    });
    expect(await next([noneFailed, status("active", "running")])).toMatchObject({ label: "ok" });
    expect(await next([noneFailed, status("inactive", "dead", "not-found")])).toMatchObject({ label: "unknown" });
  });
});
