/** Everything a command needs, built once from the env: config, catalog (nothing spawned), attach layer. */
import { readFileSync } from "node:fs";
import { readRegistry } from "@roadnerd/registry";
import { z } from "zod";
import { type AttachEvent, Attacher, type AttacherOptions } from "./attach.ts";
import { type Catalog, loadCatalog } from "./catalog.ts";
import { envKeyOf, loadOrchestratorConfig, type OrchestratorConfig, remoteServersFromEnv } from "./config.ts";
import { UsageError } from "./errors.ts";
import { PRINTABLE_TOKEN, plaintextMessage, type RemoteServer, readHostsFile, tokenInClear } from "./hosts.ts";
import { runningServers } from "./running.ts";
import { serverEnv } from "./server-env.ts";

export interface Orchestrator {
  config: OrchestratorConfig;
  catalog: Catalog;
  attacher: Attacher;
}

const serversFile = z.record(
  z.string(),
  z.union([z.string().url(), z.object({ url: z.string().url(), token: z.string().optional() })]),
);

function readServersFile(path: string): z.output<typeof serversFile> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    throw new UsageError(`ROADNERD_SERVERS_FILE ${path}: not a readable JSON file`);
  }
  const parsed = serversFile.safeParse(raw);
  if (!parsed.success) {
    throw new UsageError(`ROADNERD_SERVERS_FILE ${path}: expected {"<server>":"http://host:port" or {"url","token"}}`);
  }
  return parsed.data;
}

/**
 * A configured server whose token would go over plain http:// beyond loopback, or could not be sent at all (a
 * CR or LF in it): one line, exit 2, with the hosts file's rules (hosts.ts).
 */
function refuseClear(config: OrchestratorConfig, where: string, server: string, r: RemoteServer): void {
  if (r.token !== undefined && !PRINTABLE_TOKEN.test(r.token))
    throw new UsageError(`${where}: the token must be printable ASCII without spaces, CR or LF`);
  if (!config.ALLOW_PLAINTEXT && tokenInClear(r.url, r.token))
    throw new UsageError(plaintextMessage(where, r.url, `the ${server} server's`));
}

/** Servers running elsewhere: ROADNERD_SERVERS_FILE, then ROADNERD_SERVER_<NAME>_URL (the env wins). */
export function remoteServers(config: OrchestratorConfig, names: readonly string[], env: NodeJS.ProcessEnv) {
  const remote = new Map<string, RemoteServer>();
  if (config.ROADNERD_SERVERS_FILE) {
    for (const [name, v] of Object.entries(readServersFile(config.ROADNERD_SERVERS_FILE))) {
      if (!names.includes(name)) continue;
      const r = typeof v === "string" ? { url: v } : { url: v.url, ...(v.token ? { token: v.token } : {}) };
      refuseClear(config, `ROADNERD_SERVERS_FILE ${config.ROADNERD_SERVERS_FILE}: ${name}`, name, r);
      remote.set(name, r);
    }
  }
  // Env wins over the file.
  for (const [name, v] of remoteServersFromEnv(names, env)) {
    refuseClear(config, `ROADNERD_SERVER_${envKeyOf(name)}_URL (with _TOKEN)`, name, v);
    remote.set(name, v);
  }
  return remote;
}

export async function createOrchestrator(
  env: NodeJS.ProcessEnv = process.env,
  onEvent?: (e: AttachEvent) => void,
  overrides: {
    idleMs?: number;
    launch?: AttacherOptions["launch"];
    envFor?: AttacherOptions["envFor"];
    /** `up`: the servers it hosts in its own process, used as running servers (on top of the configured ones). */
    remote?: ReadonlyMap<string, { url: string; token?: string }>;
    catalog?: Catalog;
    /** call/triage/mcp: use servers already running on their default ports; the note says which (or why not). */
    reuseRunning?: (line: string) => void;
  } = {},
): Promise<Orchestrator> {
  const config = loadOrchestratorConfig(env);
  const servers = readRegistry();
  const catalog = overrides.catalog ?? (await loadCatalog(servers));
  const remote = remoteServers(
    config,
    servers.map((s) => s.name),
    env,
  );
  for (const [name, r] of overrides.remote ?? []) remote.set(name, r);
  // Servers `roadnerd up` already runs on their default ports, unless configured elsewhere.
  if (overrides.reuseRunning) {
    // Quiet when it uses them (the usual case under `roadnerd up`); runningServers says why it does not.
    for (const [name, r] of await runningServers(servers, new Set(remote.keys()), overrides.reuseRunning, env))
      remote.set(name, r);
  }
  const attacher = new Attacher({
    servers,
    remote,
    ...(config.ROADNERD_HOSTS
      ? {
          hosts: readHostsFile(
            config.ROADNERD_HOSTS,
            servers.map((s) => s.name),
            { allowPlaintext: config.ALLOW_PLAINTEXT },
          ),
        }
      : {}),
    idleMs: overrides.idleMs ?? config.ROADNERD_IDLE_MS,
    attachTimeoutMs: config.ROADNERD_ATTACH_TIMEOUT_MS,
    envFor: overrides.envFor ?? ((server) => serverEnv(catalog.envKeys(server), env)),
    resultSchema: (server, tool) => catalog.get(`${server}/${tool}`)?.definition.outputSchema,
    ...(onEvent ? { onEvent } : {}),
    ...(overrides.launch ? { launch: overrides.launch } : {}),
  });
  return { config, catalog, attacher };
}
