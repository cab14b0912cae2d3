/** Config from the environment: read in one place, validated by zod, defaulted once, frozen. */
import { availableParallelism } from "node:os";
import { z } from "zod";
import { DiagError } from "../errors/errors.ts";
import { hostEntryProblem, originEntryProblem } from "./list-entries.ts";

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_EXEC_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

const csv = z
  .string()
  .optional()
  .transform((v) =>
    (v ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
  );

/** A comma-separated list each of whose entries must pass `problem` (undefined: fine; else why not). */
const checkedCsv = (problem: (entry: string) => string | undefined) =>
  csv.superRefine((entries, ctx) => {
    for (const entry of entries) {
      const message = problem(entry);
      if (message) ctx.addIssue({ code: "custom", message });
    }
  });

const portSchema = z.coerce
  .number({ error: "expected a port number 0-65535" })
  .int("expected a port number 0-65535")
  .min(0, "expected a port number 0-65535")
  .max(65535, "expected a port number 0-65535");

const flag = z
  .enum(["0", "1", "true", "false"])
  .optional()
  .transform((v) => v === "1" || v === "true");

const bound = (fallback: number, max: number) => z.coerce.number().int().min(1).max(max).default(fallback);

/** Defaults for the bounds on concurrent work (a laptop shares its two to eight cores with these servers). */
export const DEFAULT_MAX_CALLS = 16;
export const DEFAULT_MAX_STREAMS = 32;
export const DEFAULT_MAX_PROCS = Math.min(8, Math.max(2, availableParallelism()));

/** Env vars every server reads. Each server may add its own with `env` in defineServer. */
export const baseEnvShape = {
  HOST: z.string().min(1).default(DEFAULT_HOST).describe("address to bind"),
  PORT: portSchema.optional().describe("port to bind; 0 = any free port"),
  LOG_LEVEL: z
    .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])
    .default("info")
    .describe("pino level (default info); the listening line is written at any level but silent"),
  AUTH_TOKEN: z
    .string()
    .min(16, "AUTH_TOKEN must be at least 16 characters")
    .regex(/^[\x21-\x7e]+$/, "AUTH_TOKEN must be printable ASCII without spaces (e.g. openssl rand -hex 16)")
    .refine((t) => new Set(t).size >= 8, "AUTH_TOKEN is too guessable: use at least 8 different characters")
    .optional()
    .describe(
      "if set, every route but /healthz needs Authorization: Bearer <token> (16+ printable characters: openssl rand -hex 16)",
    ),
  ALLOWED_HOSTS: checkedCsv(hostEntryProblem).describe(
    "extra Host header names accepted (DNS-rebinding guard), each exactly: no wildcard or port",
  ),
  ALLOWED_ORIGINS: checkedCsv(originEntryProblem).describe(
    "browser Origins served besides this server's own, each exactly as browsers send it (scheme://host[:port], no wildcard): e.g. http://localhost:6274 for the MCP Inspector's direct mode",
  ),
  OUTBOUND_ALLOW: csv.describe("if set, the only targets tools may reach: CIDRs or host names"),
  OUTBOUND_DENY: csv.describe("targets always denied, on top of cloud metadata and link-local"),
  EXEC_PATH: z.string().default(DEFAULT_EXEC_PATH).describe("PATH used to find allowlisted binaries"),
  OUTBOUND_ALLOW_SELF: flag.describe("1: tools may reach this server's own address and port (denied by default)"),
  ALLOW_UNAUTHENTICATED: flag.describe(
    "1: bind beyond loopback without AUTH_TOKEN (only for a container whose port is published on the host's loopback)",
  ),
  TLS_CERT_FILE: z
    .string()
    .optional()
    .describe("PEM certificate (chain) file: serve HTTPS instead of HTTP (with TLS_KEY_FILE)"),
  TLS_KEY_FILE: z.string().optional().describe("PEM private key file of TLS_CERT_FILE"),
  TLS_CLIENT_CA_FILE: z
    .string()
    .optional()
    .describe("PEM CA file: with TLS, every client must present a certificate this CA signed (mutual TLS)"),
  ALLOW_PLAINTEXT: flag.describe(
    "1: bind beyond loopback without TLS (only where the network itself is private: a pod network, a published loopback port)",
  ),
  MAX_CALLS: bound(DEFAULT_MAX_CALLS, 1024).describe(
    `tool calls running at once; more get 503 E_BUSY (default ${DEFAULT_MAX_CALLS})`,
  ),
  MAX_STREAMS: bound(DEFAULT_MAX_STREAMS, 1024).describe(
    `open SSE streams; more get 503 E_BUSY (default ${DEFAULT_MAX_STREAMS})`,
  ),
  ALLOWED_UIDS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      const items = (v ?? "")
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      if (items.includes("*")) return "*" as const;
      const uids = items.map(Number);
      if (uids.some((u) => !Number.isInteger(u) || u < 0)) {
        ctx.addIssue({ code: "custom", message: "expected uids (numbers) separated by commas, or *" });
      }
      return uids;
    })
    .describe(
      "local users (uids) that may call over loopback without AUTH_TOKEN, besides root, our own user and SUDO_UID; * for all",
    ),
  SUDO_UID: z.coerce.number().int().min(0).optional().describe("set by sudo: the user who started us may call us"),
  ROADNERD_PARENT_PID: z.coerce
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      "set by roadnerd: exit (as on SIGTERM) when this process (roadnerd), or the one that started us, is gone",
    ),
  MAX_PROCS: bound(DEFAULT_MAX_PROCS, 256).describe(
    "subprocesses running at once; more wait within their deadline (default: cores, 2 to 8)",
  ),
};

export type BaseConfig = z.output<z.ZodObject<typeof baseEnvShape>>;

const TLS_FILE_VARIABLES = ["TLS_CERT_FILE", "TLS_KEY_FILE", "TLS_CLIENT_CA_FILE"] as const;

/** The TLS files come as a pair, and a client CA only means something with them: what is missing, as issue lines. */
function tlsFileIssues(config: { TLS_CERT_FILE?: unknown; TLS_KEY_FILE?: unknown; TLS_CLIENT_CA_FILE?: unknown }) {
  const { TLS_CERT_FILE: cert, TLS_KEY_FILE: key, TLS_CLIENT_CA_FILE: clientCa } = config;
  const issues: string[] = [];
  if (cert && !key) issues.push("TLS_KEY_FILE: TLS_CERT_FILE needs it");
  if (key && !cert) issues.push("TLS_CERT_FILE: TLS_KEY_FILE needs it");
  if (clientCa && !cert) issues.push("TLS_CLIENT_CA_FILE: client certificates need TLS_CERT_FILE and TLS_KEY_FILE");
  return issues;
}

export function loadConfig<S extends z.ZodRawShape>(
  env: NodeJS.ProcessEnv,
  extra: S = {} as S,
): Readonly<BaseConfig & z.output<z.ZodObject<S>>> {
  const schema = z.object({ ...baseEnvShape, ...extra });
  // Empty strings mean "unset", as in most shells' `FOO= cmd`; but not for a TLS file, where an empty value
  // would silently turn HTTPS or client certificates off (`TLS_CLIENT_CA_FILE=` let every client in).
  const emptyTls = TLS_FILE_VARIABLES.filter((name) => env[name] !== undefined && env[name]?.trim() === "");
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = schema.safeParse(cleaned);
  const lines = [
    ...emptyTls.map((name) => `${name}: set but empty (unset it, or name a PEM file)`),
    ...(parsed.success
      ? tlsFileIssues(parsed.data)
      : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`)),
  ];
  if (!parsed.success || lines.length) {
    throw new DiagError("E_INVALID_INPUT", `invalid environment: ${lines.join("; ")}`);
  }
  return Object.freeze(parsed.data) as Readonly<BaseConfig & z.output<z.ZodObject<S>>>;
}
