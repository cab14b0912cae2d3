/**
 * The triage loop end to end with real attached servers (the built network server on loopback, in the
 * sealed namespace): scripted small-model replies with their mistakes, the one-repair rule, the step
 * budget, the JSONL log of every step, and the rules planner reaching a label.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readRegistry } from "@roadnerd/registry";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Attacher } from "../src/attach.ts";
import { type Catalog, loadCatalog } from "../src/catalog.ts";
import { RulesPlanner } from "../src/planners/rules.ts";
import { ScriptedPlanner } from "../src/planners/scripted.ts";
import { runTriage } from "../src/triage.ts";

let catalog: Catalog;
let logDir: string;
const attachers: Attacher[] = [];
const newAttacher = () => {
  const a = new Attacher({ servers: readRegistry() });
  attachers.push(a);
  return a;
};

beforeAll(async () => {
  catalog = await loadCatalog(readRegistry().filter((s) => s.name === "network" || s.name === "ports"));
  logDir = await mkdtemp(join(tmpdir(), "rn-triage-"));
});
afterEach(async () => {
  await Promise.all(attachers.splice(0).map((a) => a.close()));
});
afterAll(async () => {
  await rm(logDir, { recursive: true, force: true });
});

const readLog = async (path: string | undefined) =>
  (await readFile(path as string, "utf8"))
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("triage with a scripted small model", () => {
  it("repairs a fenced reply, resolves a near-miss name, calls, and stops at the label; every step logged", async () => {
    const planner = new ScriptedPlanner([
      '```json\n{"tool":"network/route_info","params":{}}\n```',
      '{"tool":"network/route_info","params":{}}',
      '{"tool":"iface_info","params":{}}',
      '{"label":"wifi","reason":"no interface has a carrier"}',
    ]);
    const outcome = await runTriage({
      planner,
      catalog,
      attacher: newAttacher(),
      symptom: "no internet",
      logDir,
      runId: "triage-test-1",
    });
    expect(planner.remaining).toBe(0);
    expect(outcome).toMatchObject({
      label: "wifi",
      reason: "no interface has a carrier",
      steps: 2,
      run_id: "triage-test-1",
    });
    expect(outcome.metrics).toMatchObject({ replies: 3, valid_first_try: 2, repairs: 1, tool_errors: 0, timeouts: 0 });
    expect(outcome.evidence.map((e) => [e.tool, e.ok])).toEqual([
      ["network/route_info", true],
      ["network/iface_info", true],
    ]);
    // The run_id reached the server and came back.
    expect(outcome.history[0]).toMatchObject({ ok: true, result: { run_id: "triage-test-1" } });
    const lines = await readLog(outcome.log_path);
    expect(outcome.log_path).toBe(join(logDir, "triage-triage-test-1.jsonl"));
    expect(
      lines.map((l) => [l.mode, l.run_id, l.step, l.requested_tool, l.attached, l.call_ok, l.repaired, l.label]),
    ).toEqual([
      ["mcp_triage", "triage-test-1", 1, "network/route_info", true, true, true, undefined],
      ["mcp_triage", "triage-test-1", 2, "network/iface_info", false, true, false, undefined],
      ["mcp_triage", "triage-test-1", 3, null, false, true, false, "wifi"],
    ]);
    expect(lines[1]?.resolved_from).toBe("iface_info");
    expect(lines[0]?.valid_first_try).toBe(false);
    for (const l of lines) expect(typeof l.duration_ms).toBe("number");
  });

  it("two invalid replies in a row end the run as unknown (one repair only), nothing called", async () => {
    const planner = new ScriptedPlanner([
      'I will check the route. {"tool":"network/route_info","params":{}}',
      '{"tool":"network/route_info","params":{}}{"tool":"network/iface_info","params":{}}',
    ]);
    const a = newAttacher();
    const outcome = await runTriage({ planner, catalog, attacher: a, logDir });
    expect(outcome).toMatchObject({ label: "unknown", steps: 0 });
    expect(outcome.reason).toContain("no valid reply after one repair");
    expect(outcome.metrics).toMatchObject({ replies: 1, valid_first_try: 0, repairs: 1 });
    expect(a.isRunning("network")).toBe(false);
    const lines = await readLog(outcome.log_path);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      requested_tool: null,
      call_ok: false,
      error_code: "E_NOT_ONE_JSON",
      label: "unknown",
      repaired: true,
    });
  });

  it("the step budget holds: after 3 calls only a label is accepted", async () => {
    const call = '{"tool":"network/route_info","params":{}}';
    const planner = new ScriptedPlanner([call, call, call, call, '{"label":"routing","reason":"no default route"}']);
    const outcome = await runTriage({ planner, catalog, attacher: newAttacher() });
    expect(outcome).toMatchObject({ label: "routing", steps: 3 });
    expect(outcome.metrics).toMatchObject({ replies: 4, valid_first_try: 3, repairs: 1 });
  });

  it("the rules with a budget of 0 (or one spent mid-path) say which call was missing, not a failed repair", async () => {
    const none = await runTriage({ planner: new RulesPlanner(), catalog, attacher: newAttacher(), budget: 0 });
    expect(none).toMatchObject({ label: "unknown", steps: 0 });
    expect(none.reason).toBe("the step budget is spent before network/route_info: these rules label from tool results");
    expect(none.metrics).toMatchObject({ repairs: 0 });
    const port = await runTriage({
      planner: new RulesPlanner(),
      catalog,
      attacher: newAttacher(),
      symptom: "port 8080 already in use",
      budget: 0,
    });
    expect(port.reason).toContain("before ports/who_uses_port");
  });

  it("a diagnosis inside a result (E_DNS_FAIL) is a result, not a tool error", async () => {
    const planner = new ScriptedPlanner([
      '{"tool":"network/dns_resolve","params":{"qname":"example.com","server":"127.0.0.1","timeout_ms":200}}',
      '{"label":"dns","reason":"the resolver does not answer"}',
    ]);
    const outcome = await runTriage({ planner, catalog, attacher: newAttacher() });
    expect(outcome.label).toBe("dns");
    expect(outcome.history[0]).toMatchObject({ ok: true, result: { error: "E_DNS_FAIL" } });
    expect(outcome.metrics.tool_errors).toBe(0);
  });

  it("an attach failure is a counted tool error with its code, fed back to the planner", async () => {
    const a = new Attacher({
      servers: readRegistry(),
      launch: () => ({ argv: [process.execPath, "-e", "process.exit(1)"], env: {} }),
    });
    attachers.push(a);
    const outcome = await runTriage({ planner: new RulesPlanner(), catalog, attacher: a });
    expect(outcome).toMatchObject({ label: "unknown", reason: "network/route_info failed: E_ATTACH", steps: 1 });
    expect(outcome.metrics).toMatchObject({ tool_errors: 1, timeouts: 0 });
    expect(outcome.evidence[0]).toMatchObject({ tool: "network/route_info", ok: false, error: { code: "E_ATTACH" } });
  });
});

describe("triage with the rules planner", () => {
  it("in the sealed namespace (loopback only): no default route, no carrier → wifi in 2 calls", async () => {
    const outcome = await runTriage({ planner: new RulesPlanner(), catalog, attacher: newAttacher() });
    expect(outcome).toMatchObject({ label: "wifi", reason: "no interface is up with a carrier", steps: 2 });
    expect(outcome.evidence.map((e) => e.tool)).toEqual(["network/route_info", "network/iface_info"]);
    expect(outcome.metrics).toMatchObject({ valid_first_try: 3, repairs: 0 });
  });
});
