/** The orchestrator's env, read in one place through zod, defaulted once and frozen. */
import { join } from "node:path";
import { MAX_TIMEOUT_MS } from "@roadnerd/conventions";
import { baseEnvShape, MIN_TIMEOUT_MS } from "@roadnerd/conventions/internal";
import { z } from "zod";
import { UsageError } from "./errors.ts";
import { PROFILE_NAMES } from "./planners/prompts.ts";

export const DEFAULT_IDLE_MS = 120_000;
export const DEFAULT_ATTACH_TIMEOUT_MS = 10_000;
export const DEFAULT_CALL_TIMEOUT_MS = 2000;
export const DEFAULT_STEP_BUDGET = 3;
/** A planner may loop: no run makes more calls than this, whatever it is given. */
export const MAX_STEP_BUDGET = 10;
export const DEFAULT_PROBE_HOST = "example.com";
/** Tool calls one gateway client may have in flight (half a server's default MAX_CALLS): see client-share.ts. */
export const DEFAULT_CLIENT_CALLS = 8;
/** MCP requests that are not tool calls one gateway client may have in flight (ADR 0039): gateway-requests.ts. */
export const DEFAULT_CLIENT_REQUESTS = 8;

const ms = (fallback: number, max: number) => z.coerce.number().int().min(1).max(max).default(fallback);

export const orchestratorEnv = z.object({
  ROADNERD_LOG_DIR: z
    .string()
    .min(1)
    .optional()
    .describe("directory for one JSONL log per triage run (default $XDG_STATE_HOME/roadnerd/runs)"),
  // A relative XDG path is to be ignored (the XDG spec), not an error.
  XDG_STATE_HOME: z
    .string()
    .startsWith("/")
    .optional()
    .catch(undefined)
    .describe("the XDG state directory (default ~/.local/state)"),
  HOME: z.string().startsWith("/").optional().catch(undefined),
  ROADNERD_IDLE_MS: ms(DEFAULT_IDLE_MS, 86_400_000).describe("detach an attached server after this idle time"),
  ROADNERD_ATTACH_TIMEOUT_MS: ms(DEFAULT_ATTACH_TIMEOUT_MS, 120_000).describe("spawn → listening → /healthz"),
  // A slow machine (a Raspberry Pi, a laptop busy with a model) needs more than the servers' 2 s default.
  ROADNERD_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(MIN_TIMEOUT_MS)
    .max(MAX_TIMEOUT_MS)
    .optional()
    .describe(
      `the timeout_ms \`roadnerd call\` and \`roadnerd triage\` send when none is given (${MIN_TIMEOUT_MS}-${MAX_TIMEOUT_MS}; default: the servers' 2000)`,
    ),
  ROADNERD_PLANNER: z.enum(["rules", "openai", "scripted"]).default("rules").describe("default planner"),
  ROADNERD_OPENAI_URL: z
    .string()
    .url()
    .optional()
    .describe("OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1"),
  ROADNERD_OPENAI_MODEL: z.string().min(1).optional().describe("model name sent to the endpoint"),
  ROADNERD_OPENAI_KEY: z.string().min(1).optional().describe("bearer key for the endpoint, if it needs one"),
  ROADNERD_MODEL_PROFILE: z.enum(PROFILE_NAMES).default("3b").describe("sampling and context profile"),
  ROADNERD_EVAL_MODELS: z
    .string()
    .regex(/^(3b|13b|20b)=[^,=]+(,(3b|13b|20b)=[^,=]+)*$/, "expected 3b=<model>,13b=<model>,20b=<model>")
    .optional()
    .describe("pnpm eval: a model name per profile on the same endpoint (default ROADNERD_OPENAI_MODEL for all)"),
  ROADNERD_PROBE_HOST: z.string().min(1).default(DEFAULT_PROBE_HOST).describe("name the rules planner resolves"),
  ROADNERD_GATEWAY_TOKEN: z
    .string()
    .min(16)
    .optional()
    .describe("bearer token the gateway (/mcp, the page, /api) requires; the page takes it as ?token="),
  ROADNERD_CLIENT_CALLS: z.coerce
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(DEFAULT_CLIENT_CALLS)
    .describe("tool calls one client (a local uid, or an address) may have in flight at the gateway"),
  // The gateway's one Origin rule is the servers' (ADR 0034), and so is what it may list (ADR 0048).
  ALLOWED_ORIGINS: baseEnvShape.ALLOWED_ORIGINS,
  ROADNERD_CLIENT_REQUESTS: z.coerce
    .number({ error: "expected a whole number of requests, 1-1000" })
    .int("expected a whole number of requests, 1-1000")
    .min(1, "expected a whole number of requests, 1-1000")
    .max(1000, "expected a whole number of requests, 1-1000")
    .default(DEFAULT_CLIENT_REQUESTS)
    .describe(
      "MCP requests other than tool calls (tools/list, initialize…) one client may have in flight at the gateway's /mcp",
    ),
  ROADNERD_SERVERS_FILE: z
    .string()
    .min(1)
    .optional()
    .describe('JSON file {"<server>":"http://host:port",…} of servers already running (compose)'),
  ROADNERD_HOSTS: z
    .string()
    .min(1)
    .optional()
    .describe(
      'JSON file of other machines, {"<host>":{"servers":{"network":"https://10.0.0.2:7101"},"token":…,"ca":…}}: every tool takes host',
    ),
  ALLOW_PLAINTEXT: baseEnvShape.ALLOW_PLAINTEXT.describe(
    "1: a server with a token (ROADNERD_HOSTS, ROADNERD_SERVERS_FILE, ROADNERD_SERVER_<NAME>_TOKEN) may be reached over http:// beyond loopback (its token crosses the network in clear; only where the network is private)",
  ),
});

export type OrchestratorConfig = Readonly<z.output<typeof orchestratorEnv>>;

export function loadOrchestratorConfig(env: NodeJS.ProcessEnv = process.env): OrchestratorConfig {
  const parsed = orchestratorEnv.safeParse(env);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new UsageError(`bad orchestrator environment: ${issues}`);
  }
  return Object.freeze(parsed.data);
}

/**
 * Where triage runs write their JSONL: ROADNERD_LOG_DIR, else the XDG state directory
 * ($XDG_STATE_HOME/roadnerd/runs, else ~/.local/state/roadnerd/runs); undefined with neither HOME nor XDG set.
 * Only absolute XDG paths count, as the XDG spec says (a relative one is ignored).
 */
export function triageLogDir(config: OrchestratorConfig): string | undefined {
  if (config.ROADNERD_LOG_DIR) return config.ROADNERD_LOG_DIR;
  const state = config.XDG_STATE_HOME ?? (config.HOME ? join(config.HOME, ".local/state") : undefined);
  return state ? join(state, "roadnerd/runs") : undefined;
}

/** A server's name as in its variables: upper-cased, - as _ (`dns-config` → `DNS_CONFIG`). */
export const envKeyOf = (name: string) => name.toUpperCase().replace(/-/g, "_");

/** `ROADNERD_SERVER_<NAME>_URL` (and `_TOKEN`), name upper-cased with - as _: servers running elsewhere. */
export function remoteServersFromEnv(
  names: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Map<string, { url: string; token?: string }> {
  const found = new Map<string, { url: string; token?: string }>();
  for (const name of names) {
    const key = `ROADNERD_SERVER_${envKeyOf(name)}`;
    const url = env[`${key}_URL`];
    if (!url) continue;
    const token = env[`${key}_TOKEN`];
    found.set(name, token ? { url, token } : { url });
  }
  return found;
}
