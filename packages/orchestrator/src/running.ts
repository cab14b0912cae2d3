/**
 * Servers already running on their default ports (`roadnerd up`, `pnpm start`): `call`, `triage` and `mcp`
 * use them instead of spawning a copy. A port counts only when its /healthz names the server; one that needs
 * a token we do not have, or answers as something else, is left alone and the note says why.
 */
import type { RegisteredServer } from "@roadnerd/registry";
import { request } from "undici";
import { z } from "zod";
import { envPrefix } from "./up/settings.ts";

/** Loopback answers at once (or refuses at once); a port that hangs is not a server of ours. */
const PROBE_MS = 1000;

const healthSchema = z.object({ ok: z.boolean(), name: z.string() });

export interface Running {
  url: string;
}

async function get(url: string): Promise<{ status: number; body: unknown }> {
  const res = await request(url, { method: "GET", signal: AbortSignal.timeout(PROBE_MS) });
  const body: unknown = await res.body.json().catch(() => null);
  return { status: res.statusCode, body };
}

/**
 * The port `up` gives a server: its default, or `ROADNERD_<SERVER>_PORT` when that moved it (the same variable
 * in this terminal finds it there).
 */
function portOf(server: RegisteredServer, env: NodeJS.ProcessEnv): number {
  const moved = Number(env[`${envPrefix(server.name)}PORT`]);
  return Number.isInteger(moved) && moved > 0 && moved < 65_536 ? moved : server.defaultPort;
}

/** The server at its port, or undefined (with a note when something else is there). */
async function probe(
  server: RegisteredServer,
  note: (line: string) => void,
  env: NodeJS.ProcessEnv,
): Promise<Running | undefined> {
  const port = portOf(server, env);
  const url = `http://127.0.0.1:${port}`;
  let health: { status: number; body: unknown };
  try {
    health = await get(`${url}/healthz`);
  } catch {
    return undefined; // nothing listens there (the usual case)
  }
  const parsed = healthSchema.safeParse(health.body);
  const want = `roadnerd-${server.name}`;
  if (health.status !== 200 || !parsed.success || parsed.data.name !== want || !parsed.data.ok) {
    const as = parsed.success ? parsed.data.name : `HTTP ${health.status}`;
    note(`(${server.name}: 127.0.0.1:${port} answers as ${as}, not ${want}: starting its own)`);
    return undefined;
  }
  // /healthz is open even with AUTH_TOKEN; the catalog is not.
  const actions = await get(`${url}/actions`).catch(() => ({ status: 0, body: null }));
  if (actions.status === 401) {
    const key = `ROADNERD_SERVER_${server.name.toUpperCase().replaceAll("-", "_")}_TOKEN`;
    note(
      `(${server.name}: the one at ${url} needs its token; set ${key} and ${key.replace(/_TOKEN$/, "_URL")} to use it: starting its own)`,
    );
    return undefined;
  }
  return { url };
}

/** Every server (but `skip`) that runs on its default port, by name. */
export async function runningServers(
  servers: readonly RegisteredServer[],
  skip: ReadonlySet<string>,
  note: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Map<string, Running>> {
  const found = await Promise.all(
    servers.filter((s) => !skip.has(s.name)).map(async (s) => [s.name, await probe(s, note, env)] as const),
  );
  const running = new Map<string, Running>();
  for (const [name, r] of found) if (r) running.set(name, r);
  return running;
}
