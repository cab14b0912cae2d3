/** Config from the environment: read in one place, validated by zod, defaulted once, frozen. */
import { z } from "zod";
import { DiagError } from "./errors.ts";

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

const portSchema = z.coerce.number().int().min(0).max(65535);

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
    .optional()
    .describe("if set, every route but /healthz needs Authorization: Bearer <token> (16+ chars)"),
  ALLOWED_HOSTS: csv.describe("extra Host header names accepted (DNS-rebinding guard)"),
  ALLOWED_ORIGINS: csv.describe("extra browser Origins accepted, e.g. https://inspector.example"),
  OUTBOUND_ALLOW: csv.describe("if set, the only targets tools may reach: CIDRs or host names"),
  OUTBOUND_DENY: csv.describe("targets always denied, on top of cloud metadata and link-local"),
  EXEC_PATH: z.string().default(DEFAULT_EXEC_PATH).describe("PATH used to find allowlisted binaries"),
};

export type BaseConfig = z.output<z.ZodObject<typeof baseEnvShape>>;

export function loadConfig<S extends z.ZodRawShape>(
  env: NodeJS.ProcessEnv,
  extra: S = {} as S,
): Readonly<BaseConfig & z.output<z.ZodObject<S>>> {
  const schema = z.object({ ...baseEnvShape, ...extra });
  // Empty strings mean "unset", as in most shells' `FOO= cmd`.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = schema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new DiagError("E_INVALID_INPUT", `invalid environment: ${lines.join("; ")}`);
  }
  return Object.freeze(parsed.data) as Readonly<BaseConfig & z.output<z.ZodObject<S>>>;
}
