/**
 * A result's `next`: the rules planner follows it where its own rules end without a cause (never instead of a
 * label they reach), once, within the budget; the model prompt shows it as the view's `next:` line.
 */
import { loadServer, readRegistry } from "@roadnerd/registry";
import { beforeAll, describe, expect, it } from "vitest";
import { type Catalog, catalogFrom } from "../src/catalog.ts";
import { buildMessages } from "../src/planners/openai.ts";
import type { StepRecord } from "../src/planners/planner.ts";
import { PROFILES } from "../src/planners/prompts.ts";
import { RulesPlanner } from "../src/planners/rules.ts";
import { portResult } from "./result-fixtures.ts";

let catalog: Catalog;
beforeAll(async () => {
  const servers = readRegistry();
  const tools = new Map(
    await Promise.all(servers.map(async (s) => [s.name, (await loadServer(s.name)).tools] as const)),
  );
  catalog = catalogFrom(servers, tools);
});

const noProxy = {
  variables: {},
  clients: [],
  warnings: [],
  system: [],
  pac: [],
  unread: [],
  truncated: false,
  omitted: 0,
  summary: "http via direct, https via direct; 0 system setting(s)",
};
const hint = { tool: "network/route_info", args: {}, why: "no proxy: look at the way out" };
const step = (result: Record<string, unknown>): StepRecord => ({
  step: 1,
  tool: "proxy/proxy_env_status",
  params: {},
  ok: true,
  result,
});

describe("next hints", () => {
  it("the rules planner follows next where its rules end as unknown", async () => {
    const planner = new RulesPlanner();
    const symptom = "the proxy is broken";
    expect(await planner.next({ symptom, catalog, history: [step(noProxy)] })).toMatchObject({ label: "unknown" });
    expect(await planner.next({ symptom, catalog, history: [step({ ...noProxy, next: hint })] })).toEqual({
      tool: "network/route_info",
      params: {},
    });
    // Not past the budget, not twice, not to a tool this catalog lacks.
    const history = [step({ ...noProxy, next: hint })];
    expect(await planner.next({ symptom, catalog, history, final: true })).toMatchObject({ label: "unknown" });
    const gone = { ...hint, tool: "network/no_such_tool" };
    expect(await planner.next({ symptom, catalog, history: [step({ ...noProxy, next: gone })] })).toMatchObject({
      label: "unknown",
    });
  });

  it("a label the rules reach is kept: next does not divert it", async () => {
    const held = {
      ...portResult(8080, [{ pid: 42, process: "nginx", unit: "nginx.service" }]),
      next: { tool: "service/service_status", args: { name: "nginx.service" }, why: "nginx.service holds port 8080" },
    };
    const history: StepRecord[] = [
      { step: 1, tool: "ports/who_uses_port", params: { port: 8080 }, ok: true, result: held },
    ];
    expect(await new RulesPlanner().next({ symptom: "port 8080 already in use", catalog, history })).toMatchObject({
      label: "port_conflict",
    });
  });

  it("the model reads next in the result's view and is told what it means", () => {
    const held = {
      ...portResult(8080, [{ pid: 42, process: "nginx", unit: "nginx.service" }]),
      next: { tool: "service/service_status", args: { name: "nginx.service" }, why: "nginx.service holds port 8080" },
    };
    const history: StepRecord[] = [
      { step: 1, tool: "ports/who_uses_port", params: { port: 8080 }, ok: true, result: held },
    ];
    const messages = buildMessages({ symptom: "port 8080", catalog, history }, PROFILES["3b"]);
    expect(messages[0]?.content).toContain('"next:" line');
    expect(messages.at(-1)?.content).toContain(
      'next: service/service_status {"name":"nginx.service"} (nginx.service holds port 8080)',
    );
  });
});
