/**
 * `roadnerd …`: the command line parsed by its schema (args.ts), then dispatch. The Orchestrator is built once
 * and everything is detached at exit. Every failure is one line and one exit code from the table (exit-codes.ts).
 */
import pkg from "../../package.json" with { type: "json" };
import type { AttachEvent } from "../attach.ts";
import { loadOrchestratorConfig, triageLogDir } from "../config.ts";
import { errorInfo, UsageError } from "../errors.ts";
import { LOCAL_HOST } from "../hosts.ts";
import { createOrchestrator, type Orchestrator } from "../orchestrator.ts";
import { type CommandLine, parseCommandLine } from "./args.ts";
import { callCommand, listCommand, triageCommand } from "./commands.ts";
import { EXIT, exitCodeFor } from "./exit-codes.ts";
import { commandHelp, HELP } from "./help.ts";
import { err, errorJson, oneLine, out } from "./output.ts";
import { makePlanner } from "./planner.ts";
import { mcpHttp, mcpStdio } from "./serve.ts";

const DEFAULT_GATEWAY_PORT = 7100;

const USAGE_HINT = "roadnerd --help for usage";

/**
 * A failure and its exit code: one line on stderr (a usage error says itself; anything else with its code), or
 * with --json one error object on stdout (output.ts, errorJson).
 */
function failed(e: unknown, json: boolean): number {
  const info = errorInfo(e);
  if (json) out(errorJson(info.code === "E_USAGE" && !info.hint ? { ...info, hint: USAGE_HINT } : info));
  else err(info.code === "E_USAGE" ? `${info.message} (${USAGE_HINT})` : `roadnerd: ${oneLine(info)}`);
  return exitCodeFor(info.code);
}

/** --json among the flags (before a `--`), known even when the rest of the line does not parse. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes("--json");
}

export async function runCli(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const json = wantsJson(argv);
  try {
    const line = parseCommandLine(argv);
    if ("version" in line) {
      out(`roadnerd ${pkg.version}`);
      return EXIT.ok;
    }
    if ("help" in line) {
      out(line.topic ? commandHelp(line.topic) : HELP);
      return line.asked ? EXIT.ok : EXIT.usage;
    }
    if (line.command === "eval") {
      const { evalCommand } = await import("../eval/command.ts");
      return await evalCommand({ scenarios: line.args, out: line.out, world: line.world }, loadOrchestratorConfig(env));
    }
    if (line.command === "up") {
      // What `ps` and `top` show, whatever started it (`pnpm start` is `node scripts/start.mjs`): the README
      // says to signal "the `roadnerd up` process".
      const { upCommand, UP_TITLE } = await import("../up/up.ts");
      process.title = UP_TITLE;
      const { port = DEFAULT_GATEWAY_PORT, args, set, processes, planner } = line;
      return await upCommand({ port, only: args, sets: set, processes, planner }, env);
    }
    return await withOrchestrator(line, env);
  } catch (e) {
    return failed(e, json);
  }
}

type OrchestratedLine = Exclude<CommandLine, { command: "eval" | "up" }>;

async function withOrchestrator(line: OrchestratedLine, env: NodeJS.ProcessEnv) {
  const events = (e: AttachEvent) => {
    if (line.command === "mcp") return; // stdio: stderr only, and quiet.
    if (e.kind !== "attached") err(`(${eventLine(e)})`);
  };
  // Every command first uses the servers `roadnerd up` (or pnpm start) already runs.
  const reuse = {
    reuseRunning: (note: string) => (line.command === "mcp" || line.command === "list" ? undefined : err(note)),
  };
  const o = await createOrchestrator(env, events, line.command === "list" ? {} : reuse);
  if (line.command !== "mcp") {
    const stop = () => void o.attacher.close().finally(() => process.exit(EXIT.interrupted));
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    // A closed terminal: our children are in their own process groups and would not get its SIGHUP.
    process.once("SIGHUP", stop);
  }
  try {
    return await dispatch(line, o);
  } finally {
    await o.attacher.close();
  }
}

/** What happened to a server this command started, in words: its copy ends with the command. */
function eventLine(e: AttachEvent): string {
  const pid = e.pid ? `, pid ${e.pid}` : "";
  if (e.kind === "detached") return `${e.server}: stopped the copy started for this command${pid}`;
  if (e.kind === "restarted") return `${e.server}: restarted${pid}`;
  return `${e.server}: exited on its own${pid}${e.how ? ` (${e.how})` : ""}`;
}

/**
 * `--host`: another machine of ROADNERD_HOSTS, as the gateway's `host` (undefined: this one). An unknown name
 * is a usage error that lists the hosts there are.
 */
function hostOf(name: string | undefined, o: Orchestrator): string | undefined {
  if (name === undefined || name === LOCAL_HOST) return undefined;
  const hosts = o.attacher.hostNames();
  if (hosts.includes(name)) return name;
  const known = [LOCAL_HOST, ...hosts].join(", ");
  throw new UsageError(
    `--host: no host ${name.slice(0, 60)} (hosts: ${known}${hosts.length ? "" : "; ROADNERD_HOSTS names the others"})`,
  );
}

async function dispatch(line: OrchestratedLine, o: Orchestrator): Promise<number> {
  switch (line.command) {
    case "list":
      return listCommand(o, line.json);
    case "call": {
      const [name, ...pairs] = line.args;
      const deadline = o.config.ROADNERD_TIMEOUT_MS;
      // The args' own timeout_ms wins over ROADNERD_TIMEOUT_MS.
      const withDeadline =
        deadline === undefined || pairs.some(([k]) => k === "timeout_ms")
          ? pairs
          : [...pairs, ["timeout_ms", deadline] as [string, unknown]];
      return await callCommand(o, name, withDeadline, line.json, hostOf(line.host, o));
    }
    case "triage":
      return await triageCommand(o, {
        planner: line.planner ?? o.config.ROADNERD_PLANNER,
        symptom: line.symptom,
        script: line.script,
        budget: line.budget,
        timeoutMs: line["timeout-ms"] ?? o.config.ROADNERD_TIMEOUT_MS,
        runId: line["run-id"],
        logDir: triageLogDir(o.config),
        host: hostOf(line.host, o),
        json: line.json,
      });
    case "mcp": {
      // The gateway's triage tool: --planner, else the configured one (a script needs a file: rules instead).
      const configured = o.config.ROADNERD_PLANNER === "scripted" ? "rules" : o.config.ROADNERD_PLANNER;
      const planner = line.planner ?? configured;
      const logDir = triageLogDir(o.config);
      const gateway = {
        catalog: o.catalog,
        attacher: o.attacher,
        planner: () => makePlanner(o.config, planner),
        ...(logDir ? { logDir } : {}),
        ...(o.config.ROADNERD_GATEWAY_TOKEN ? { token: o.config.ROADNERD_GATEWAY_TOKEN } : {}),
      };
      const port = line.port ?? DEFAULT_GATEWAY_PORT;
      return line.http ? await mcpHttp(gateway, port) : await mcpStdio(gateway);
    }
  }
}
