/**
 * The openai planner against a local OpenAI-compatible HTTP server this test runs on 127.0.0.1 (it replays
 * a small model's replies and records each request): the spec's prompts, the 3B/13B profiles, the repair
 * turn, results fed back, and the whole triage loop with a real attached network server.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readRegistry } from "@roadnerd/registry";
import { CLOSED_PORT } from "@roadnerd/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Attacher } from "../src/attach.ts";
import { type Catalog, loadCatalog } from "../src/catalog.ts";
import { buildMessages, OpenAiPlanner } from "../src/planners/openai.ts";
import type { StepRecord } from "../src/planners/planner.ts";
import { REPAIR_PROMPT, SYSTEM_PROMPT } from "../src/planners/prompts.ts";
import { runTriage } from "../src/triage.ts";
import { portalResult } from "./result-fixtures.ts";

interface ChatRequest {
  model: string;
  temperature: number;
  max_tokens: number;
  messages: Array<{ role: string; content: string }>;
}

let server: Server;
let base: string;
let replies: string[] = [];
let status = 200;
const requests: Array<{ body: ChatRequest; auth: string | undefined; path: string | undefined }> = [];
let catalog: Catalog;
const attachers: Attacher[] = [];

beforeAll(async () => {
  catalog = await loadCatalog(readRegistry().filter((s) => s.name === "network"));
  server = createServer((req, res) => {
    let raw = "";
    req.on("data", (d: Buffer) => {
      raw += d.toString();
    });
    req.on("end", () => {
      requests.push({ body: JSON.parse(raw) as ChatRequest, auth: req.headers.authorization, path: req.url });
      if (status !== 200) {
        res.writeHead(status, { "content-type": "application/json" }).end('{"error":{"message":"model not loaded"}}');
        return;
      }
      const content = replies.shift() ?? "";
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "x",
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterEach(async () => {
  requests.length = 0;
  replies = [];
  status = 200;
  await Promise.all(attachers.splice(0).map((a) => a.close()));
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const attacher = () => {
  const a = new Attacher({ servers: readRegistry() });
  attachers.push(a);
  return a;
};

describe("openai planner", () => {
  it("drives a triage: spec prompts, 3B profile, one repair, results fed back, label", async () => {
    replies = [
      'Let me check routing first: {"tool":"network/route_info","params":{}}',
      '{"tool":"network/route_info","params":{}}',
      '{"tool":"network/iface_info","params":{}}',
      '{"label":"wifi","reason":"no carrier on any interface"}',
    ];
    const planner = new OpenAiPlanner({
      url: base,
      model: "qwen2.5-3b-instruct",
      apiKey: "test-key-123",
      profile: "3b",
    });
    const outcome = await runTriage({
      planner,
      catalog,
      attacher: attacher(),
      symptom: "wifi connected but no internet",
    });
    expect(outcome).toMatchObject({ label: "wifi", reason: "no carrier on any interface", steps: 2 });
    expect(outcome.metrics).toMatchObject({ replies: 3, valid_first_try: 2, repairs: 1 });
    expect(requests).toHaveLength(4);
    for (const r of requests) {
      expect(r.path).toBe("/v1/chat/completions");
      expect(r.auth).toBe("Bearer test-key-123");
      expect(r.body).toMatchObject({ model: "qwen2.5-3b-instruct", temperature: 0.2, max_tokens: 80 });
      expect(r.body.messages[0]?.role).toBe("system");
      expect(r.body.messages[0]?.content.startsWith(SYSTEM_PROMPT)).toBe(true);
      expect(r.body.messages[0]?.content).toContain("network/dns_resolve {qname, type?, server?}");
      expect(r.body.messages[1]?.content).toMatch(
        /^Symptom: wifi connected but no internet\n(Already called: .*\n)?Which single tool do you need first\?$/,
      );
    }
    // The repair turn: the bad reply, then the spec's repair prompt with what was wrong.
    const repair = requests[1]?.body.messages ?? [];
    expect(repair.at(-2)).toEqual({
      role: "assistant",
      content: 'Let me check routing first: {"tool":"network/route_info","params":{}}',
    });
    expect(repair.at(-1)?.content).toBe(`${REPAIR_PROMPT} (prose around the JSON: return only it)`);
    // After the first call its result comes back, then "Next tool?".
    const third = requests[2]?.body.messages ?? [];
    expect(third.at(-2)).toEqual({ role: "assistant", content: '{"tool":"network/route_info","params":{}}' });
    // The result as its model view: the verdict first, then the fields that decide the next step.
    expect(third.at(-1)?.content).toMatch(
      /^Result: no default route \(IPv4 or IPv6\)[^\n]*\ngateway=none\nNext tool\?$/,
    );
    // 3B keeps one earlier result in context; the older call is named, not repeated.
    const fourth = requests[3]?.body.messages ?? [];
    expect(fourth).toHaveLength(4);
    expect(fourth[1]?.content).toContain("Already called: network/route_info (ok)");
  });

  it("13B profile: more tokens and all three turns kept", () => {
    const history = [1, 2, 3].map(
      (step): StepRecord => ({ step, tool: "network/route_info", params: {}, ok: true, result: { step } }),
    );
    const m13 = buildMessages(
      { symptom: "x", catalog, history, final: true },
      { temperature: 0.2, max_tokens: 160, turns: 3, result_chars: 1500 },
    );
    expect(m13).toHaveLength(2 + 3 * 2 + 1);
    expect(m13.at(-1)?.content).toBe("No more tools. Return ONLY the label JSON now.");
    const m3 = buildMessages(
      { symptom: "x", catalog, history },
      { temperature: 0.2, max_tokens: 80, turns: 1, result_chars: 600 },
    );
    expect(m3).toHaveLength(2 + 2);
  });

  it("a profile's cut never reaches the verdict: the summary whole, the fields cut", () => {
    const reason = `portal: ${"the test URL was redirected to a login page ".repeat(2)}`.trim();
    const portal = portalResult({ suspected: true, status: 302, reason });
    const result = { ...portal, summary: `captive portal suspected: ${reason.replace("portal: ", "")}` };
    const history: StepRecord[] = [{ step: 1, tool: "network/captive_portal_check", params: {}, ok: true, result }];
    const tight = { temperature: 0.2, max_tokens: 80, turns: 1, result_chars: 120 };
    const content = buildMessages({ symptom: "x", catalog, history }, tight).at(-1)?.content ?? "";
    expect(content.startsWith(`Result: ${result.summary}\n`)).toBe(true);
    expect(content).not.toContain('"verdicts"');
    const roomy = buildMessages({ symptom: "x", catalog, history }, { ...tight, result_chars: 600 }).at(-1)?.content;
    expect(roomy).toContain("suspected=true; status=302");
  });

  it("an endpoint error ends the run as unknown with the status, and nothing is attached", async () => {
    status = 503;
    const a = attacher();
    const outcome = await runTriage({ planner: new OpenAiPlanner({ url: base, model: "m" }), catalog, attacher: a });
    expect(outcome.label).toBe("unknown");
    expect(outcome.reason).toContain("answered 503");
    expect(a.isRunning("network")).toBe(false);
  });

  it("an endpoint nothing listens on: where, the OS's code and what to check, in the reason", async () => {
    const url = `http://127.0.0.1:${CLOSED_PORT}/v1`;
    const outcome = await runTriage({ planner: new OpenAiPlanner({ url, model: "m" }), catalog, attacher: attacher() });
    expect(outcome.label).toBe("unknown");
    expect(outcome.reason).toBe(
      `planner failed: ${url}/chat/completions could not be reached (ECONNREFUSED): is the model server running there? (ROADNERD_OPENAI_URL)`,
    );
  });
});
