/**
 * Run a scenario's world and a triage inside it, once per planner: the built `roadnerd` bin runs in the
 * laptop namespace (so the servers it attaches see exactly that world), prints its outcome as JSON and logs
 * every step as JSONL through the one triage loop; the harness reads both back through their schemas and
 * turns them into metrics. Everything is removed afterwards, even when a run fails.
 */

import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { type AddressInfo, connect, createServer as createNetServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ProgramOutput, runProgram } from "@roadnerd/conventions/supervise";
import { REPO_ROOT } from "@roadnerd/registry";
import { createNetnsLab, type ListeningProcess, spawnListening } from "@roadnerd/testkit";
import { type BrainstormResult, brainstorm } from "../brainstorm.ts";
import { PROFILES, type ProfileName } from "../planners/prompts.ts";
import { type LoggedLine, loggedLineSchema } from "../triage-log.ts";
import { type TriageReport, triageReportSchema } from "../triage-report.ts";
import { type Extra, SCENARIO_ENV, type Scenario } from "./scenarios.ts";
import type { WorldSpec } from "./world-host.ts";

/** The built CLI: the triage runs from it, and so do the world hosts (`roadnerd eval --world`). */
export const ORCHESTRATOR_BIN = join(REPO_ROOT, "packages/orchestrator/dist/main.js");
const RUN_TIMEOUT_MS = 60_000;

interface Forwarder {
  port: number;
  close(): Promise<void>;
}

const portOf = (address: AddressInfo | string | null) => (typeof address === "object" && address ? address.port : 0);

/** A TCP forwarder on `host:0` to one fixed target (the model endpoint), nothing else. */
function forward(host: string, toHost: string, toPort: number): Promise<Forwarder> {
  const sockets = new Set<Socket>();
  const server = createNetServer((inbound) => {
    const outbound = connect({ host: toHost, port: toPort });
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () =>
      resolve({
        port: portOf(server.address()),
        close: () =>
          new Promise<void>((r) => {
            for (const s of sockets) s.destroy();
            server.close(() => r());
          }),
      }),
    );
  });
}

/** `baseline`: the openai planner with no tools (--budget 0), a label from the symptom alone, as the spec asks. */
export type PlannerName = "rules" | "scripted" | "openai" | "baseline";

export interface RunResult {
  scenario: string;
  planner: PlannerName;
  /** For the model's runs (openai, baseline): the profile, and the model it asked. */
  profile?: ProfileName;
  model?: string;
  expected: string;
  label: string;
  correct: boolean;
  reason: string;
  /** Tool calls made before the label. */
  steps: number;
  /** Inside the orchestrator: first planner turn to label, attaches included. */
  time_to_label_ms: number;
  replies: number;
  valid_first_try: number;
  repairs: number;
  tool_errors: number;
  timeouts: number;
  /** Per step, from the JSONL log. */
  log: LoggedLine[];
  run_id: string;
  category_hint: string;
  /** The brainstorm after it (model runs only): baseline without a hint, openai with this run's category_hint. */
  brainstorm?: BrainstormResult;
}

function run(argv: readonly string[], env: Record<string, string>): Promise<ProgramOutput> {
  return runProgram(argv, { env, timeoutMs: RUN_TIMEOUT_MS }).catch((err: Error & { stderr?: string }) => {
    throw new Error(`${argv.slice(4, 7).join(" ")} failed: ${err.message}\n${err.stderr ?? ""}`);
  });
}

export interface RunOptions {
  planners: readonly PlannerName[];
  /**
   * For the openai planner: the model endpoint as the harness reaches it. The laptop namespace reaches it
   * through a veth to this namespace (mgmt0, which the model then also sees) and a TCP forwarder here.
   */
  openai?: {
    url: string;
    model: string;
    /** Each model planner runs once per profile (default the 3b one). */
    profiles?: readonly ProfileName[];
    /** A model name per profile on the same endpoint (default `model`). */
    models?: Partial<Record<ProfileName, string>>;
  };
  /** Extra env for the orchestrator (e.g. ROADNERD_OPENAI_URL for the openai planner). */
  env?: Record<string, string>;
}

/** The outcome `roadnerd triage --json` prints on its last line, read through its schema. */
function readOutcome(stdout: string): TriageReport {
  return triageReportSchema.parse(JSON.parse(stdout.trim().split("\n").at(-1) ?? ""));
}

/** The run's one JSONL log (the directory is the run's own), every line read through the log's schema. */
async function readLog(dir: string): Promise<LoggedLine[]> {
  const [file] = await readdir(dir);
  if (!file) throw new Error(`no triage log in ${dir}`);
  const text = await readFile(join(dir, file), "utf8");
  return text
    .trim()
    .split("\n")
    .map((line) => loggedLineSchema.parse(JSON.parse(line)));
}

export async function runScenario(scenario: Scenario, options: RunOptions): Promise<RunResult[]> {
  if (!existsSync(ORCHESTRATOR_BIN)) {
    throw new Error(
      `${ORCHESTRATOR_BIN} is missing: ROADNERD_ONLY=network,ports,storage,service,proxy,orchestrator pnpm build`,
    );
  }
  const lab = createNetnsLab();
  const hosts: ListeningProcess[] = [];
  let forwarder: Forwarder | undefined;
  let extra: Extra = {};
  const tmp = await mkdtemp(join(tmpdir(), `rn-eval-${scenario.name}-`));
  try {
    const world = scenario.build(lab);
    extra = (await scenario.prepare?.(tmp)) ?? {};
    const startHost = async (ns: string, spec: WorldSpec | undefined) => {
      if (!spec) return;
      const argv = [...lab.wrap(ns), process.execPath, ORCHESTRATOR_BIN, "eval", "--world", JSON.stringify(spec)];
      hosts.push(await spawnListening(argv, { timeoutMs: 20_000 }));
    };
    await Promise.all([startHost(world.upstream, world.upstreamSpec), startHost(world.laptop, world.laptopSpec)]);
    let modelEnv: Record<string, string> = {};
    if (options.planners.includes("openai") || options.planners.includes("baseline")) {
      if (!options.openai) throw new Error("the openai planner needs options.openai (url, model)");
      const { rootAddr } = lab.linkToRoot(world.laptop);
      const target = new URL(options.openai.url);
      forwarder = await forward(rootAddr, target.hostname, Number(target.port || 80));
      modelEnv = { ROADNERD_OPENAI_URL: `http://${rootAddr}:${forwarder.port}${target.pathname}` };
    }
    const results: RunResult[] = [];
    // Each model planner once per profile; rules and scripted once.
    const runs = options.planners.flatMap(
      (planner): Array<{ planner: PlannerName; profile?: ProfileName }> =>
        planner === "openai" || planner === "baseline"
          ? (options.openai?.profiles ?? ["3b" as const]).map((profile) => ({ planner, profile }))
          : [{ planner }],
    );
    for (const { planner, profile } of runs) {
      const logDir = join(tmp, profile ? `${planner}-${profile}` : planner);
      const usesModel = planner === "openai" || planner === "baseline";
      const model = profile ? (options.openai?.models?.[profile] ?? options.openai?.model) : undefined;
      const profileEnv =
        profile && model ? { ...modelEnv, ROADNERD_OPENAI_MODEL: model, ROADNERD_MODEL_PROFILE: profile } : {};
      const args = [
        "triage",
        "--planner",
        usesModel ? "openai" : planner,
        ...(planner === "baseline" ? ["--budget", "0"] : []),
        "--symptom",
        scenario.symptom,
        "--json",
      ];
      if (planner === "scripted") {
        const script = join(tmp, "script.json");
        await writeFile(script, JSON.stringify(scenario.scripted));
        args.push("--script", script);
      }
      const env = {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        ...SCENARIO_ENV,
        ...world.env,
        ...extra.env,
        ROADNERD_LOG_DIR: logDir,
        ...(usesModel ? profileEnv : {}),
        ...options.env,
      };
      const argv = [...lab.wrap(world.laptop), ...(extra.wrap ?? []), process.execPath, ORCHESTRATOR_BIN, ...args];
      const { stdout } = await run(argv, env);
      const outcome = readOutcome(stdout);
      const log = await readLog(logDir);
      // The roadmap's hand-off: brainstorm on the same endpoint, the hint from this triage (none for baseline).
      const ideas =
        profile && model && options.openai
          ? await brainstorm(
              { url: options.openai.url, model },
              PROFILES[profile],
              scenario.symptom,
              planner === "openai" ? outcome.category_hint : undefined,
            )
          : undefined;
      results.push({
        scenario: scenario.name,
        planner,
        ...(profile && model ? { profile, model } : {}),
        expected: scenario.expected,
        label: outcome.label,
        correct: outcome.label === scenario.expected,
        reason: outcome.reason,
        steps: outcome.steps,
        time_to_label_ms: outcome.metrics.duration_ms,
        replies: outcome.metrics.replies,
        valid_first_try: outcome.metrics.valid_first_try,
        repairs: outcome.metrics.repairs,
        tool_errors: outcome.metrics.tool_errors,
        timeouts: outcome.metrics.timeouts,
        log,
        run_id: outcome.run_id,
        category_hint: outcome.category_hint,
        ...(ideas ? { brainstorm: ideas } : {}),
      });
    }
    return results;
  } finally {
    await Promise.allSettled([...hosts.map((h) => h.stop()), forwarder?.close(), extra.stop?.()]);
    await lab.cleanup();
    await rm(tmp, { recursive: true, force: true });
  }
}
