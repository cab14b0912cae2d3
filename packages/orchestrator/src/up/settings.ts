/**
 * One server's own settings under `roadnerd up`: `ROADNERD_<SERVER>_<VAR>` in the environment (server name
 * upper-cased, `-` as `_`) and `--set <server>.<VAR>=<value>` on the command line (that wins), on top of the
 * variables every server inherits. So webcheck alone can get `OUTBOUND_ALLOW`, or network another PORT.
 */
import { baseEnvShape } from "@roadnerd/conventions/internal";
import { UsageError } from "../errors.ts";

/** The address, token and parent are the attach layer's: a setting cannot move a server off loopback. */
const NOT_SETTABLE = new Set(["HOST", "AUTH_TOKEN", "ALLOW_UNAUTHENTICATED", "ROADNERD_PARENT_PID"]);

export const envPrefix = (server: string) => `ROADNERD_${server.toUpperCase().replace(/-/g, "_")}_`;

/** The variables a server takes a setting for: the kernel's (but the attach layer's) and its own. */
export function settableKeys(ownKeys: readonly string[]): string[] {
  return [...Object.keys(baseEnvShape), ...ownKeys].filter((k) => !NOT_SETTABLE.has(k));
}

export type ServerSettings = ReadonlyMap<string, Readonly<Record<string, string>>>;

/**
 * Every server's settings from the env and the `--set` words; a `--set` naming an unknown server or a variable
 * the server does not take is a UsageError that lists what it does take.
 */
export function serverSettings(
  servers: ReadonlyArray<{ name: string; keys: readonly string[] }>,
  sets: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): ServerSettings {
  const out = new Map<string, Record<string, string>>();
  for (const { name, keys } of servers) {
    const own: Record<string, string> = {};
    for (const key of settableKeys(keys)) {
      const value = env[`${envPrefix(name)}${key}`];
      if (value !== undefined) own[key] = value;
    }
    out.set(name, own);
  }
  for (const word of sets) {
    const match = /^([a-z0-9-]+)\.([A-Z0-9_]+)=(.*)$/s.exec(word);
    if (!match)
      throw new UsageError(
        `--set ${word.slice(0, 60)}: expected <server>.<VAR>=<value>, e.g. webcheck.OUTBOUND_ALLOW=127.0.0.1`,
      );
    const [, name = "", key = "", value = ""] = match;
    const server = servers.find((s) => s.name === name);
    if (!server)
      throw new UsageError(`--set ${name}.${key}: unknown server (known: ${servers.map((s) => s.name).join(", ")})`);
    const keys = settableKeys(server.keys);
    if (!keys.includes(key)) throw new UsageError(`--set ${name}.${key}: ${name} takes ${keys.join(", ")}`);
    const own = out.get(name) ?? {};
    own[key] = value;
    out.set(name, own);
  }
  return out;
}
