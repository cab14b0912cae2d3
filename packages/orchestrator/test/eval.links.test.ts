/**
 * The evaluation harness in the suite: every scenario as a real namespace world, triaged by the built
 * `roadnerd` bin inside it with the rules planner and a scripted small model. Labels, step counts, repairs
 * and the JSONL log are asserted; every namespace and process is gone afterwards, even on failure
 * (runScenario cleans up in finally; the lab's exit hooks are the last resort).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { netnsSkipReason, systemdSkipReason } from "@roadnerd/testkit";
import { describe, expect, it } from "vitest";
import { BRAINSTORM_PROMPT } from "../src/brainstorm.ts";
import { loadOrchestratorConfig } from "../src/config.ts";
import { evalModels } from "../src/eval/command.ts";
import { runScenario } from "../src/eval/harness.ts";
import { renderMarkdown, renderSvg, summarize } from "../src/eval/report.ts";
import { SCENARIOS, type Scenario } from "../src/eval/scenarios.ts";
import type { LoggedLine } from "../src/triage-log.ts";

/** Repairs the scripted replies need (their deliberate mistakes), per scenario. */
const SCRIPTED_REPAIRS: Record<string, number> = {
  wifi_basic: 1,
  dns_basic: 1,
  gateway_dead: 0,
  iface_up_no_net: 0,
  ambiguous_inet: 1,
  port_conflict_8080: 1,
  captive_portal: 1,
  proxy_407: 1,
  proxy_dead: 1,
  service_failed: 1,
  disk_full: 1,
  port_conflict_5432: 0,
  healthy: 0,
};

/** Tools the rules planner calls per scenario, in order. */
const RULES_PATH: Record<string, string[]> = {
  wifi_basic: ["network/route_info"],
  // The gateway's ARP entry read again after the failed query (none before it: nothing had gone that way).
  dns_basic: ["network/route_info", "network/dns_resolve", "network/route_info"],
  gateway_dead: ["network/route_info", "network/dns_resolve", "network/route_info"],
  iface_up_no_net: ["network/route_info", "network/iface_info"],
  ambiguous_inet: ["network/route_info", "network/dns_resolve", "network/captive_portal_check"],
  port_conflict_8080: ["ports/who_uses_port"],
  captive_portal: ["network/route_info", "network/dns_resolve", "network/captive_portal_check"],
  proxy_407: ["proxy/proxy_env_status", "proxy/proxy_connectivity_test"],
  proxy_dead: ["proxy/proxy_env_status", "proxy/proxy_connectivity_test"],
  service_failed: ["service/list_failed_units"],
  disk_full: ["storage/disk_usage"],
  port_conflict_5432: ["ports/who_uses_port"],
  healthy: ["network/route_info", "network/dns_resolve", "network/captive_portal_check"],
};

/** What the rules planner's reason must say in the new worlds: the world's own fault, not another one. */
const RULES_REASON: Record<string, RegExp> = {
  dns_basic: /^the gateway 198\.51\.100\.1 has answered ARP but example\.com does not resolve \(E_DNS_FAIL/,
  gateway_dead: /^the default gateway 198\.51\.100\.1 does not answer \(no link-layer address: /,
  proxy_407: /E_CONN_REFUSED \(the proxy answered 407\): the proxy wants credentials \(Basic realm="corp"\)/,
  proxy_dead: /^through the proxy: E_CONN_REFUSED: .*203\.0\.113\.31/,
  service_failed: /^failed units: nginx\.service$/,
  disk_full: /rn-eval-disk_full-[^ ]+\/full is 100% full/,
  port_conflict_5432: /^port 5432 is already held by node/,
  healthy: /^route, DNS and HTTP all work/,
};

/** Worlds that need a booted systemd (testkit's harness) besides namespaces. */
const NEEDS_SYSTEMD = new Set(["service_failed"]);

const ourNamespaces = () =>
  execFileSync("ip", ["netns", "list"], { encoding: "utf8" })
    .split("\n")
    .filter((l) => l.startsWith(`rn-${process.pid}-`));

describe.skipIf(netnsSkipReason())("evaluation scenarios (rules and scripted planners)", () => {
  for (const scenario of SCENARIOS) {
    const skip = NEEDS_SYSTEMD.has(scenario.name) && systemdSkipReason() !== undefined;
    it.skipIf(skip)(`${scenario.name} → ${scenario.expected}`, { timeout: 90_000 }, async () => {
      const [rules, scripted] = await runScenario(scenario, { planners: ["rules", "scripted"] });
      expect(ourNamespaces()).toEqual([]);
      // disk_full's tmpfs lived in the triage's own mount namespace: never here, and gone with it.
      expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain("rn-eval-full");
      expect(rules).toMatchObject({
        planner: "rules",
        label: scenario.expected,
        correct: true,
        repairs: 0,
        tool_errors: 0,
      });
      expect(rules?.log.filter((l) => l.requested_tool).map((l) => l.requested_tool)).toEqual(
        RULES_PATH[scenario.name],
      );
      expect(rules?.valid_first_try).toBe(rules?.replies);
      const reason = RULES_REASON[scenario.name];
      if (reason) expect(rules?.reason).toMatch(reason);
      expect(scripted).toMatchObject({
        planner: "scripted",
        label: scenario.expected,
        repairs: SCRIPTED_REPAIRS[scenario.name],
        tool_errors: 0,
      });
      for (const r of [rules, scripted]) {
        expect(r?.steps).toBeLessThanOrEqual(3);
        // Every step logged, the first call attached its server, every call succeeded.
        for (const line of r?.log ?? []) expect(line).toMatchObject({ mode: "mcp_triage", run_id: r?.run_id });
        const callLines = (r?.log ?? []).filter((l) => l.requested_tool);
        expect(callLines[0]?.attached).toBe(true);
        expect(callLines.every((l) => l.call_ok === true)).toBe(true);
        expect(r?.log.at(-1)).toMatchObject({ label: scenario.expected });
      }
    });
  }
});

interface ChatRequest {
  model: string;
  max_tokens: number;
  messages: Array<{ content: string }>;
}

const isBrainstorm = (body: ChatRequest) => body.messages[0]?.content === BRAINSTORM_PROMPT;

/** A stand-in OpenAI-compatible model on 127.0.0.1: `reply` gives each request's answer. */
async function standInModel(reply: (body: ChatRequest) => string): Promise<{ url: string; close(): void }> {
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d: Buffer) => {
      raw += d.toString();
    });
    req.on("end", () => {
      const content = reply(JSON.parse(raw));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ choices: [{ index: 0, message: { role: "assistant", content } }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, close: () => server.close() };
}

function scenarioNamed(name: string): Scenario {
  const found = SCENARIOS.find((s) => s.name === name);
  if (!found) throw new Error(`no scenario ${name}`);
  return found;
}

const dnsBasic = scenarioNamed("dns_basic");

describe.skipIf(netnsSkipReason())("evaluation with the openai planner", () => {
  it("dns_basic through a local OpenAI-compatible endpoint reached from inside the scenario", {
    timeout: 90_000,
  }, async () => {
    // A stand-in model on 127.0.0.1 replaying a small model's replies (mistakes included).
    const replies = [...dnsBasic.scripted];
    const seen: ChatRequest[] = [];
    const model = await standInModel((body) => {
      if (isBrainstorm(body)) return '{"ideas":["restart the resolver","check /etc/resolv.conf"]}';
      seen.push(body);
      return replies.shift() ?? "";
    });
    try {
      const openai = { url: model.url, model: "stand-in-3b" };
      const [run] = await runScenario(dnsBasic, { planners: ["openai"], openai });
      expect(run).toMatchObject({
        planner: "openai",
        label: "dns",
        correct: true,
        steps: 2,
        repairs: 1,
        tool_errors: 0,
        profile: "3b",
        brainstorm: { with_hint: true, parsed: true, ideas: 2 },
      });
      expect(seen).toHaveLength(dnsBasic.scripted.length);
      expect(seen[0]).toMatchObject({ model: "stand-in-3b", max_tokens: 80 });
      expect(ourNamespaces()).toEqual([]);
    } finally {
      model.close();
    }
  });
});

describe.skipIf(netnsSkipReason())("evaluation baseline (the same model, no tools)", () => {
  it("asks the model once for a label from the symptom alone: no tool is called", {
    timeout: 60_000,
  }, async () => {
    const asked: string[] = [];
    const model = await standInModel((body) => {
      if (isBrainstorm(body)) return "Sure! Here are ideas: restart it.";
      asked.push(body.messages.at(-1)?.content ?? "");
      return '{"label":"routing","reason":"a guess from the symptom"}';
    });
    try {
      const openai = { url: model.url, model: "stand-in-3b" };
      const [run] = await runScenario(dnsBasic, { planners: ["baseline"], openai });
      expect(run).toMatchObject({ planner: "baseline", label: "routing", correct: false, steps: 0, tool_errors: 0 });
      // The brainstorm after a baseline has no hint; prose around nothing is not parsed.
      expect(run?.brainstorm).toMatchObject({ with_hint: false, parsed: false, ideas: 0 });
      expect(asked).toEqual([`Symptom: ${dnsBasic.symptom}\nNo more tools. Return ONLY the label JSON now.`]);
      expect(ourNamespaces()).toEqual([]);
    } finally {
      model.close();
    }
  });
});

/**
 * Two stand-in models on one endpoint, told apart by the model name: `miss-3b` answers prose where JSON is due
 * and guesses wrong without tools; `right-20b` calls route_info, then dns_resolve, then says dns, and its
 * brainstorm is JSON (more ideas with the hint than without).
 */
function twoModels(body: ChatRequest): string {
  const last = body.messages.at(-1)?.content ?? "";
  const right = body.model === "right-20b";
  if (isBrainstorm(body)) {
    if (!right) return "Here are some ideas: check the wifi.";
    return last.includes("Triage found: dns")
      ? '{"ideas":["resolver down","wrong nameserver","check resolv.conf","try another DNS"]}'
      : '{"ideas":["check the cable","restart the router"]}';
  }
  if (!right) return last.includes("No more tools") ? '{"label":"wifi","reason":"a guess"}' : "I think it is the wifi.";
  const results = body.messages.filter((m) => m.content.startsWith("Result:")).length;
  if (last.includes("No more tools") || results >= 2) return '{"label":"dns","reason":"the name does not resolve"}';
  return results === 0
    ? '{"tool":"network/route_info","params":{}}'
    : '{"tool":"network/dns_resolve","params":{"qname":"example.com"}}';
}

describe.skipIf(netnsSkipReason())(
  "evaluation matrix: profiles, the baseline ratio and the brainstorm hand-off",
  () => {
    it("a model that misses and one that gets it right, each with and without tools, then brainstorming", {
      timeout: 150_000,
    }, async () => {
      const model = await standInModel(twoModels);
      try {
        const openai = {
          url: model.url,
          model: "unused",
          profiles: ["3b", "20b"] as const,
          models: { "3b": "miss-3b", "20b": "right-20b" },
        };
        const results = await runScenario(dnsBasic, { planners: ["openai", "baseline"], openai });
        const by = (planner: string, profile: string) =>
          results.find((r) => r.planner === planner && r.profile === profile);
        expect(by("openai", "3b")).toMatchObject({
          model: "miss-3b",
          label: "unknown",
          correct: false,
          steps: 0,
          repairs: 1,
          valid_first_try: 0,
        });
        expect(by("baseline", "3b")).toMatchObject({ label: "wifi", correct: false, steps: 0 });
        expect(by("openai", "20b")).toMatchObject({
          model: "right-20b",
          label: "dns",
          correct: true,
          steps: 2,
          repairs: 0,
        });
        expect(by("baseline", "20b")).toMatchObject({ label: "dns", correct: true, steps: 0 });
        // The hand-off: the miss never parses; the right one parses both, with more ideas given the hint.
        expect(by("openai", "3b")?.brainstorm).toMatchObject({ with_hint: true, parsed: false, ideas: 0 });
        expect(by("baseline", "20b")?.brainstorm).toMatchObject({ with_hint: false, parsed: true, ideas: 2 });
        expect(by("openai", "20b")?.brainstorm).toMatchObject({ with_hint: true, parsed: true, ideas: 4 });
        expect(by("openai", "20b")?.category_hint).toMatch(/^dns: the name does not resolve · network\/route_info: /);
        const sums = summarize(results);
        const row = (p: string) => sums.find((s) => s.planner === p);
        expect(row("openai·20b")).toMatchObject({
          correct_pct: 100,
          valid_first_try_pct: 100,
          brainstorm_parsed_pct: 100,
          mean_ideas: 4,
        });
        expect(row("openai·20b")?.time_vs_baseline).toBeGreaterThan(0);
        expect(row("openai·3b")).toMatchObject({
          correct_pct: 0,
          valid_first_try_pct: 0,
          repairs: 1,
          brainstorm_parsed_pct: 0,
        });
        const md = renderMarkdown(results, { date: "2026-01-01", node: "24" });
        expect(md).toContain("| openai·13b | not run |");
        expect(md).toMatch(/- ≥ 30% less time to label than the no-tools baseline \(openai·20b\): ratio [\d.]+/);
        expect(md).toContain(
          "- ≥ 15% better idea parsing with category_hint (3b): 0% without → 0% with (no baseline to compare); ideas 0 → 0 ✗.",
        );
        expect(md).toContain(
          "- ≥ 15% better idea parsing with category_hint (20b): 100% without → 100% with (+0%); ideas 2 → 4 ✗.",
        );
        expect(ourNamespaces()).toEqual([]);
      } finally {
        model.close();
      }
    });
  },
);

describe("evaluation report", () => {
  const line = (step: number, requested_tool: string | null): LoggedLine => ({
    ts: "2026-01-01T00:00:00.000Z",
    mode: "mcp_triage",
    run_id: "x",
    step,
    planner: "rules",
    requested_tool,
    attached: false,
    call_ok: true,
    duration_ms: 1,
    repaired: false,
    valid_first_try: true,
  });
  const run = (planner: "rules" | "scripted", correct: boolean, ms: number) => ({
    scenario: "dns_basic",
    planner,
    expected: "dns",
    label: correct ? "dns" : "routing",
    correct,
    reason: "r",
    steps: 2,
    time_to_label_ms: ms,
    replies: 3,
    valid_first_try: planner === "rules" ? 3 : 2,
    repairs: planner === "rules" ? 0 : 1,
    tool_errors: 0,
    timeouts: 0,
    log: [line(1, "network/route_info"), line(2, "network/dns_resolve"), line(3, null)],
    run_id: "x",
    category_hint: "dns: example.com does not resolve",
  });

  it("summarizes per planner with the spec's metrics", () => {
    expect(summarize([run("rules", true, 100), run("scripted", false, 300)])).toEqual([
      {
        planner: "rules",
        runs: 1,
        correct_pct: 100,
        mean_steps: 2,
        mean_time_ms: 100,
        valid_first_try_pct: 100,
        repairs: 0,
        tool_error_rate: 0,
        timeout_rate: 0,
      },
      {
        planner: "scripted",
        runs: 1,
        correct_pct: 0,
        mean_steps: 2,
        mean_time_ms: 300,
        valid_first_try_pct: 66.7,
        repairs: 1,
        tool_error_rate: 0,
        timeout_rate: 0,
      },
    ]);
  });

  it("the Markdown and the SVG show every run, a wrong label marked", () => {
    const rs = [run("rules", true, 100), run("scripted", false, 300)];
    const md = renderMarkdown(rs, { date: "2026-01-01", node: "20" });
    expect(md).toContain("| dns_basic | rules | dns | dns ✓ | 2 | 100 | 100% | 0 | 0 | 0 | – |");
    expect(md).toContain("| dns_basic | scripted | dns | routing ✗ | 2 | 300 | 66.7% | 1 | 0 | 0 | – |");
    const svg = renderSvg(rs);
    expect(svg.match(/<rect /g)).toHaveLength(4);
    expect(svg).toContain('fill="#d0392b"');
    expect(svg).toContain("300 ms, 2 steps");
  });

  it("ROADNERD_EVAL_MODELS names a model per profile; anything else in it is a usage error", () => {
    const config = loadOrchestratorConfig({ ROADNERD_EVAL_MODELS: "3b=llama3.2:3b,20b=gpt-oss:20b" });
    expect(evalModels(config)).toEqual({ "3b": "llama3.2:3b", "20b": "gpt-oss:20b" });
    expect(evalModels(loadOrchestratorConfig({}))).toEqual({});
    expect(() => loadOrchestratorConfig({ ROADNERD_EVAL_MODELS: "7b=x" })).toThrow(
      /ROADNERD_EVAL_MODELS: expected 3b=/,
    );
  });

  it("without a model endpoint the model rows of the matrix say not run; the rules rows are there", () => {
    const md = renderMarkdown([run("rules", true, 100)], { date: "2026-01-01", node: "20" });
    expect(md).toContain("| rules | 1 | 100% | 100% | 0 | 2 | 100 | – | 0% | 0% | – | – |");
    for (const p of ["3b", "13b", "20b"]) {
      expect(md).toContain(`| openai·${p} | not run |`);
      expect(md).toContain(`| baseline·${p} | not run |`);
    }
    expect(md).toContain("- ≥ 30% less time to label than the no-tools baseline: not run (needs a model endpoint).");
    expect(md).toContain("- ≥ 15% better idea parsing with category_hint: not run (needs a model endpoint).");
  });
});
