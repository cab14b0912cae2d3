/** `roadnerd …`: argument parsing and dispatch. The Orchestrator is built once; everything is detached at exit. */
import { parseArgs } from "node:util";
import { MAX_TIMEOUT_MS } from "@roadnerd/conventions";
import { MIN_TIMEOUT_MS } from "@roadnerd/conventions/internal";
import type { RegisteredServer } from "@roadnerd/registry";
import { type AttachEvent, defaultLaunch } from "../attach.ts";
import { MAX_STEP_BUDGET } from "../config.ts";
import { createOrchestrator } from "../orchestrator.ts";
import { callCommand, listCommand, makePlanner, triageCommand } from "./commands.ts";
import { HELP } from "./help.ts";
import { err, out } from "./output.ts";
import { mcpHttp, mcpStdio, up } from "./serve.ts";

const DEFAULT_GATEWAY_PORT = 7100;

/** `up` keeps every server attached until Ctrl-C (no idle detach), each on its registered default port. */
const UP_OVERRIDES = {
  idleMs: 2 ** 31 - 1,
  launch: (server: RegisteredServer) => {
    const launch = defaultLaunch(server);
    return { ...launch, env: { ...launch.env, PORT: String(server.defaultPort) } };
  },
};

export async function runCli(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (e) {
    err(`${(e as Error).message}\n${HELP}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    out(HELP);
    return command || values.help ? 0 : 2;
  }
  const events = (e: AttachEvent) => {
    if (command === "mcp") return; // stdio: stderr only, and quiet.
    if (e.kind !== "attached") err(`(${e.server} ${e.kind}${e.pid ? ` pid ${e.pid}` : ""})`);
  };
  let o: Awaited<ReturnType<typeof createOrchestrator>>;
  try {
    o = await createOrchestrator(env, events, command === "up" ? UP_OVERRIDES : {});
  } catch (e) {
    err((e as Error).message);
    return 2;
  }
  const longRunning = command === "up" || command === "mcp";
  if (!longRunning) {
    const stop = () => void o.attacher.close().finally(() => process.exit(130));
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    // A closed terminal: our children are in their own process groups and would not get its SIGHUP.
    process.once("SIGHUP", stop);
  }
  const planner = values.planner ?? (o.config.ROADNERD_PLANNER === "scripted" ? "rules" : o.config.ROADNERD_PLANNER);
  const gateway = {
    catalog: o.catalog,
    attacher: o.attacher,
    planner: () => makePlanner(o, { planner }),
    ...(o.config.ROADNERD_LOG_DIR ? { logDir: o.config.ROADNERD_LOG_DIR } : {}),
  };
  const budget = values.budget === undefined ? undefined : Number(values.budget);
  if (budget !== undefined && !(Number.isInteger(budget) && budget >= 0 && budget <= MAX_STEP_BUDGET)) {
    err(`--budget: expected 0-${MAX_STEP_BUDGET} tool calls, got ${values.budget}`);
    return 2;
  }
  const timeoutMs = values["timeout-ms"] === undefined ? undefined : Number(values["timeout-ms"]);
  if (
    timeoutMs !== undefined &&
    !(Number.isInteger(timeoutMs) && timeoutMs >= MIN_TIMEOUT_MS && timeoutMs <= MAX_TIMEOUT_MS)
  ) {
    err(`--timeout-ms: expected ${MIN_TIMEOUT_MS}-${MAX_TIMEOUT_MS}, got ${values["timeout-ms"]}`);
    return 2;
  }
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port <= 65535)) {
    err(`--port: expected 0-65535, got ${values.port}`);
    return 2;
  }
  try {
    switch (command) {
      case "mcp":
        return values.http ? await mcpHttp(gateway, port ?? DEFAULT_GATEWAY_PORT) : await mcpStdio(gateway);
      case "up":
        return await up(o, gateway, port ?? DEFAULT_GATEWAY_PORT, rest);
      case "list":
        return listCommand(o, Boolean(values.json));
      case "call":
        return await callCommand(o, rest, Boolean(values.json));
      case "triage":
        return await triageCommand(o, {
          planner: values.planner ?? o.config.ROADNERD_PLANNER,
          symptom: values.symptom ?? "",
          ...(values.script ? { script: values.script } : {}),
          ...(budget !== undefined ? { budget } : {}),
          ...(timeoutMs ? { timeoutMs } : {}),
          json: Boolean(values.json),
        });
      default:
        err(`unknown command ${command}\n${HELP}`);
        return 2;
    }
  } finally {
    await o.attacher.close();
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
      planner: { type: "string" },
      symptom: { type: "string" },
      script: { type: "string" },
      budget: { type: "string" },
      "timeout-ms": { type: "string" },
      http: { type: "boolean" },
      port: { type: "string" },
    },
  });
}
