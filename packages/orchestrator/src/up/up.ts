/**
 * `roadnerd up`: every server (or the named ones) and the MCP gateway until a signal. By default all of them
 * live in this one process (in-process.ts); `--processes` starts each server as its own process instead
 * (compose, Kubernetes and `--stdio` run servers that way too). Either way each server has its own port and
 * settings (settings.ts), a server that faults or exits is started again (restarts.ts, shown in the gateway's
 * /healthz), and `up` exits 1 at once when no server could start rather than serve an empty gateway.
 */

import { releaseFreeHeap } from "@roadnerd/conventions";
import { holdYoungGeneration, trimAfterQuiet } from "@roadnerd/conventions/memory";
import { loadServer, readRegistry } from "@roadnerd/registry";
import { type AttachEvent, defaultLaunch } from "../attach.ts";
import { loadCatalog } from "../catalog.ts";
import { EXIT } from "../cli/exit-codes.ts";
import { err, out } from "../cli/output.ts";
import { makePlanner } from "../cli/planner.ts";
import { listenGateway, untilSignal } from "../cli/serve.ts";
import { triageLogDir } from "../config.ts";
import { UsageError } from "../errors.ts";
import type { GatewayOptions } from "../gateway.ts";
import { createOrchestrator, type Orchestrator } from "../orchestrator.ts";
import { serverEnv } from "../server-env.ts";
import { InProcessServers } from "./in-process.ts";
import { Restarts } from "./restarts.ts";
import { envPrefix, serverSettings } from "./settings.ts";

/** What `ps` shows for `roadnerd up` (main.ts sets it), and what the README says to signal. */
export const UP_TITLE = "roadnerd up";

/** `up` keeps every server attached until it stops: no idle detach. */
const NEVER_IDLE = 2 ** 31 - 1;

export interface UpLine {
  port: number;
  only: readonly string[];
  sets: readonly string[];
  processes: boolean;
  planner?: "rules" | "openai" | "scripted" | undefined;
}

interface Hosting {
  restarts: Restarts;
  pidOf(server: string): number | undefined;
  close(): Promise<void>;
}

export async function upCommand(line: UpLine, env: NodeJS.ProcessEnv): Promise<number> {
  // Before the servers load: `up` lives long and holds them all, so its young generation grows to 8 MiB and
  // no further (ADRs 0037, 0071). The price is its one start: every builtin loaded after a V8 flag is set
  // compiles from source (ADR 0062). The other commands set no flag.
  holdYoungGeneration();
  let stopTrim = () => {};
  const registry = readRegistry();
  const catalog = await loadCatalog(registry);
  const known = catalog.servers.map((s) => s.name);
  const unknown = line.only.filter((n) => !known.includes(n));
  if (unknown.length > 0) throw new UsageError(`unknown server: ${unknown.join(", ")} (known: ${known.join(", ")})`);
  const names = line.only.length > 0 ? known.filter((n) => line.only.includes(n)) : known;
  const settings = serverSettings(
    catalog.servers.map((s) => ({ name: s.name, keys: catalog.envKeys(s.name) })),
    line.sets,
    env,
  );
  // Each on its registered default port unless a setting says otherwise; loopback always.
  const envFor = (server: string): Record<string, string> => ({
    ...serverEnv(catalog.envKeys(server), env),
    LOG_LEVEL: "warn",
    PORT: String(registry.find((s) => s.name === server)?.defaultPort ?? 0),
    ...settings.get(server),
    HOST: "127.0.0.1",
  });

  let hosting: Hosting;
  let o: Orchestrator;
  let started: Map<string, { url: string } | { reason: string }>;
  if (line.processes) {
    // Each server its own process, spawned by the attach layer on its port; an exit is restarted from here.
    let restarts: Restarts | undefined;
    const onEvent = (e: AttachEvent) => {
      // SIGKILL from no one here: the kernel's OOM killer, a user, or the spawn helper it was started by going
      // first (the server dies with it, ADR 0051, 0068).
      if (e.kind === "exited") restarts?.faulted(e.server, `process ${e.pid ?? "?"} exited (${e.how ?? "?"})`);
    };
    o = await createOrchestrator(env, onEvent, {
      idleMs: NEVER_IDLE,
      envFor: (server) => envFor(server),
      launch: (server) => {
        const launch = defaultLaunch(server);
        const own = envFor(server.name);
        return { ...launch, env: { ...launch.env, LOG_LEVEL: own.LOG_LEVEL ?? "warn", PORT: own.PORT ?? "0" } };
      },
      catalog,
    });
    const attacher = o.attacher;
    restarts = new Restarts(async (server) => (await attacher.ensure(server)).client.baseUrl, err);
    started = await restarts.startAll(names);
    hosting = {
      restarts,
      pidOf: (s) => attacher.pidOf(s),
      // The server processes drain with the gateway, not after its grace: their own callers waited for both.
      close: async () => {
        restarts?.close();
        await attacher.close();
      },
    };
  } else {
    const defs = new Map(await Promise.all(names.map(async (n) => [n, await loadServer(n)] as const)));
    const servers = new InProcessServers({ defs, envFor, say: err });
    started = await servers.start(names);
    const remote = new Map([...started].flatMap(([n, r]) => ("url" in r ? [[n, { url: r.url }] as const] : [])));
    o = await createOrchestrator(env, undefined, { idleMs: NEVER_IDLE, remote, catalog });
    hosting = servers;
  }

  const reasons = new Map([...started].flatMap(([n, r]) => ("reason" in r ? [[n, r.reason] as const] : [])));
  const failed = names.filter((n) => reasons.has(n));
  const taken = failed.flatMap((n) => /:(\d+) is already in use/.exec(reasons.get(n) ?? "")?.[1] ?? []);
  if (names.length > 1 && taken.length === names.length) {
    // Every port taken: most likely a second `pnpm start`; one line for it rather than one per server.
    err(`every server's port is taken (${taken.join(", ")}): is \`${UP_TITLE}\` already running (ps shows it so)?`);
    err("  stop it, or run this one beside it: --set <server>.PORT=<port> for each server (0 = any free port)");
  } else {
    for (const name of failed) {
      err(`${name} did not start: ${reasons.get(name)}`);
      if (/already in use/.test(reasons.get(name) ?? ""))
        err(`  (under up: ${envPrefix(name)}PORT=<port>, or --set ${name}.PORT=<port>; 0 = any free port)`);
    }
  }
  const stop = async () => {
    stopTrim();
    await hosting.close();
    await o.attacher.close();
  };
  if (failed.length === names.length) {
    err("roadnerd: no server could start; not serving an empty gateway");
    await stop();
    return EXIT.failed;
  }

  const configured = o.config.ROADNERD_PLANNER === "scripted" ? "rules" : o.config.ROADNERD_PLANNER;
  const planner = line.planner ?? configured;
  const logDir = triageLogDir(o.config);
  const gateway: GatewayOptions = {
    catalog: o.catalog,
    attacher: o.attacher,
    planner: () => makePlanner(o.config, planner),
    status: () => hosting.restarts.status(),
    ...(logDir ? { logDir } : {}),
    ...(o.config.ROADNERD_GATEWAY_TOKEN ? { token: o.config.ROADNERD_GATEWAY_TOKEN } : {}),
  };
  const http = await listenGateway(gateway, line.port);
  if (!http) {
    await stop();
    return EXIT.failed;
  }
  // In one process, what a burst of calls leaves is given back once it has been quiet a while.
  if (!line.processes) stopTrim = trimAfterQuiet({ release: releaseFreeHeap });
  const rows: Array<[string, string, string]> = [["server", "url", "pid"]];
  for (const name of names) {
    const r = started.get(name);
    if (r && "url" in r) rows.push([name, r.url, String(hosting.pidOf(name) ?? "remote")]);
    else rows.push([name, "FAILED (above)", "-"]);
  }
  rows.push(["gateway (MCP)", http.url, String(process.pid)]);
  const widths = [0, 1].map((c) => Math.max(...rows.map((r) => r[c]?.length ?? 0)));
  for (const r of rows) out(`${r[0].padEnd(widths[0] ?? 0)}  ${r[1].padEnd(widths[1] ?? 0)}  ${r[2]}`);
  err(`The page: ${http.url.replace(/mcp$/, "")} (health, diagnose, connectivity, disk, ports, web)`);
  // `pnpm start network` runs one server: the line says so rather than "every server".
  const one = names.length === 1 ? names[0] : undefined;
  err(
    line.processes
      ? `One process per server (--processes); Ctrl-C stops ${one ? `${one} and the gateway` : "every server and the gateway"}.`
      : one
        ? `${one} and the gateway in this one process; Ctrl-C stops both.`
        : "Every server in this one process; Ctrl-C stops them all.",
  );
  // pnpm passes no signal on to us: a script must signal this process (the gateway's row), not pnpm.
  err(`From a script: kill -INT ${process.pid} (this process; signalling pnpm does not stop it).`);
  err(
    'Try, in another terminal: pnpm exec roadnerd triage   (or: pnpm exec roadnerd triage --symptom "port 8080 already in use")',
  );
  await untilSignal();
  // One grace period for everyone: the gateway and the servers drain at once (in turn, a server's direct
  // callers waited for the gateway's 2 s and then their server's: E_BUSY at 4 s). Each server's close then
  // cancels what its calls still run, so `up` exits within the grace period, not at the calls' own deadline.
  await Promise.all([http.close(), hosting.close()]);
  await stop();
  err("stopped.");
  return failed.length === 0 ? EXIT.ok : EXIT.failed;
}
