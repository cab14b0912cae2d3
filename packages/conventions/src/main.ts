/** Process entry for every server: HTTP by default, `--stdio` for MCP over stdin/stdout. */
import module from "node:module";
import type { BaseConfig } from "./define/config.ts";
import type { ServerDef } from "./define/server-def.ts";
import { isLoopback } from "./http/guards.ts";
import { createRuntime, type Runtime } from "./runtime/runtime.ts";

function help(def: ServerDef<unknown>): string {
  const extraEnv = Object.keys(def.env);
  return `roadnerd-${def.name}: ${def.summary}

usage: roadnerd-${def.name} [--stdio] [--help]

  (default)  serve HTTP+SSE and MCP (Streamable HTTP at /mcp) on HOST:PORT
  --stdio    serve MCP over stdin/stdout; logs go to stderr

env: HOST (default 127.0.0.1), PORT (default ${def.defaultPort}; 0 = any free port), LOG_LEVEL, AUTH_TOKEN
     (required to bind beyond loopback, or ALLOW_UNAUTHENTICATED=1), ALLOWED_HOSTS, ALLOWED_ORIGINS,
     ALLOWED_UIDS, OUTBOUND_ALLOW, OUTBOUND_DENY, OUTBOUND_ALLOW_SELF, MAX_CALLS, MAX_STREAMS, MAX_PROCS, EXEC_PATH${extraEnv.length ? `,\n     ${extraEnv.join(", ")}` : ""}
`;
}

function flushCompileCache(): void {
  try {
    (module as { flushCompileCache?: () => void }).flushCompileCache?.();
  } catch {
    // No cache enabled, or a read-only cache directory: nothing to flush.
  }
}

function runtimeOrExit<C extends BaseConfig>(def: ServerDef<C>, logDestination: number): Runtime<C> | undefined {
  try {
    return createRuntime(def, { logDestination });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exitCode = 2;
    return undefined;
  }
}

export async function runMain<C extends BaseConfig>(
  def: ServerDef<C>,
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(help(def));
    return;
  }
  const unknown = argv.filter((a) => a !== "--stdio");
  if (unknown.length) {
    process.stderr.write(`unknown argument: ${unknown.join(" ")}\n${help(def)}`);
    process.exitCode = 2;
    return;
  }
  if (argv.includes("--stdio")) return serveStdioMain(def);
  return serveHttpMain(def);
}

/** Started by roadnerd: when it is gone (even by SIGKILL, which runs no hook of its), so are we. */
function exitWithParent(parent: number | undefined, stop: () => void): void {
  if (parent === undefined) return;
  const check = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(check);
      stop();
    }
  }, 1000);
  check.unref();
}

async function serveStdioMain<C extends BaseConfig>(def: ServerDef<C>): Promise<void> {
  // stdout carries only protocol: every log line goes to stderr. Fastify is never loaded in this mode.
  const runtime = runtimeOrExit(def, 2);
  if (!runtime) return;
  const { serveStdio } = await import("./mcp/transports.ts");
  await serveStdio(runtime);
  runtime.log.info({ transport: "stdio" }, "serving MCP over stdio");
  // Exit on a signal through process.exit, so the exec module's exit hook kills any live process group.
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.once(signal, () => process.exit(0));
}

async function serveHttpMain<C extends BaseConfig>(def: ServerDef<C>): Promise<void> {
  const runtime = runtimeOrExit(def, 1);
  if (!runtime) return;
  const { config, log } = runtime;
  // A bind that other machines (or containers) can reach: anything but loopback.
  if (
    !isLoopback(config.HOST.replace(/^\[|\]$/g, "").toLowerCase()) &&
    !config.AUTH_TOKEN &&
    !config.ALLOW_UNAUTHENTICATED
  ) {
    process.stderr.write(
      `refusing to bind ${config.HOST} without AUTH_TOKEN: anyone who can reach it could run these tools. ` +
        "Set AUTH_TOKEN (16+ chars), bind 127.0.0.1, or — only for a container whose port is published on the " +
        "host's loopback — set ALLOW_UNAUTHENTICATED=1\n",
    );
    process.exitCode = 2;
    return;
  }
  const { buildHttpApp } = await import("./http/http-app.ts");
  const app = await buildHttpApp(runtime);
  // Handlers before the listening line: a supervisor may stop us the moment it reads that line.
  const close = (signal: string) => {
    log.info({ signal }, "closing");
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.once(signal, () => close(signal));
  exitWithParent(config.ROADNERD_PARENT_PID, () => close("parent gone"));
  const port = config.PORT ?? def.defaultPort;
  let address: string;
  try {
    address = await app.listen({ host: config.HOST, port });
  } catch (err) {
    // The most common start-up failure (a second start, an old server still running): one line, not a stack.
    const code = (err as { code?: string }).code;
    const why =
      code === "EADDRINUSE"
        ? `${config.HOST}:${port} is already in use (another roadnerd-${def.name}?); stop it, or set PORT to another port (PORT=0: any free one)`
        : code === "EADDRNOTAVAIL"
          ? `${config.HOST} is not an address of this machine; set HOST`
          : code === "EACCES"
            ? `not allowed to bind ${config.HOST}:${port}; choose a port above 1023`
            : `cannot listen on ${config.HOST}:${port}: ${(err as Error).message}`;
    process.stderr.write(`roadnerd-${def.name}: ${why}\n`);
    await app.close().catch(() => {});
    process.exitCode = 1;
    return;
  }
  const bound = app.server.address();
  const url =
    typeof bound === "object" && bound
      ? `http://${bound.family === "IPv6" ? `[${bound.address}]` : bound.address}:${bound.port}`
      : address;
  if (typeof bound === "object" && bound) runtime.outbound.setSelf(bound.address, bound.port);
  // The line orchestrators wait for: written even when LOG_LEVEL is above info (but not when silent).
  const announce = config.LOG_LEVEL === "silent" ? log : log.child({}, { level: "info" });
  announce.info({ url, port: typeof bound === "object" && bound ? bound.port : port }, "listening");
  // Node >= 22.10 writes its compile cache only at a graceful exit; write it now, so the next start is warm
  // even if this one is killed.
  flushCompileCache();
}
