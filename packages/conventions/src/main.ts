/** Process entry for every server: HTTP by default, `--stdio` for MCP over stdin/stdout. */
import "./define/zod-jitless.ts";
import type { BaseConfig } from "./define/config.ts";
import type { ServerDef } from "./define/server-def.ts";
import { releaseFreeHeap } from "./netlink/sock-diag.ts";
import { codeCacheMode } from "./process/code-cache-mode.ts";
import { holdYoungGeneration, trimAfterQuiet } from "./process/memory.ts";
import { createRuntime, type Runtime } from "./runtime/runtime.ts";

function help(def: ServerDef<unknown>): string {
  const extraEnv = Object.keys(def.env);
  return `roadnerd-${def.name}: ${def.summary}

usage: roadnerd-${def.name} [--stdio] [--help]

  (default)  serve HTTP+SSE and MCP (Streamable HTTP at /mcp) on HOST:PORT
  --stdio    serve MCP over stdin/stdout; logs go to stderr

env: HOST (default 127.0.0.1), PORT (default ${def.defaultPort}; 0 = any free port), LOG_LEVEL, AUTH_TOKEN
     (required to bind beyond loopback, or ALLOW_UNAUTHENTICATED=1), TLS_CERT_FILE and TLS_KEY_FILE (HTTPS;
     required to bind beyond loopback, or ALLOW_PLAINTEXT=1), TLS_CLIENT_CA_FILE, ALLOWED_HOSTS, ALLOWED_ORIGINS,
     ALLOWED_UIDS, OUTBOUND_ALLOW, OUTBOUND_DENY, OUTBOUND_ALLOW_SELF, MAX_CALLS, MAX_STREAMS, MAX_PROCS, EXEC_PATH${extraEnv.length ? `,\n     ${extraEnv.join(", ")}` : ""}
`;
}

/**
 * A standalone server's process is ours alone: the young generation is capped (at 8 MiB) and the process is
 * trimmed when quiet, as `up` is (process/memory.ts, ADR 0041). Once it serves, not before: a V8
 * flag set at run time makes Node compile every builtin loaded after it from source rather than from its code
 * cache, 3× the time (ADR 0062). A start that writes the bundle's code cache for `pnpm build` keeps V8's
 * flags as they are at the next start's compile, or V8 would refuse that cache.
 */
function tuneMemoryOnceUp(): void {
  if (codeCacheMode() === "write") return;
  holdYoungGeneration();
  trimAfterQuiet({ release: releaseFreeHeap });
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

/**
 * Started by roadnerd: when it is gone (even by SIGKILL, which runs no hook of its), so are we. Our parent is the
 * spawn helper roadnerd forked us through (ADR 0068), not roadnerd itself: gone when `parent` is, or when the
 * process that started us is (we are reparented).
 */
function exitWithParent(parent: number | undefined, stop: () => void): void {
  if (parent === undefined) return;
  const startedBy = process.ppid;
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === "EPERM";
    }
  };
  const check = setInterval(() => {
    if (process.ppid !== startedBy || !alive(parent)) {
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
  const session = await serveStdio(runtime);
  runtime.log.info({ transport: "stdio" }, "serving MCP over stdio");
  tuneMemoryOnceUp();
  // A signal: the calls in flight are answered (their result within the grace period, else E_BUSY), then the
  // exit goes through process.exit, so the exec module's exit hook kills any live process group. A second
  // signal does not wait.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return process.exit(0);
    stopping = true;
    runtime.log.info({ signal }, "closing");
    runtime.shutdown();
    session.drain().finally(() => process.exit(0));
  };
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => stop(signal));
}

async function serveHttpMain<C extends BaseConfig>(def: ServerDef<C>): Promise<void> {
  const { hostHttp, HostError } = await import("./http/host-http.ts");
  let hosted: Awaited<ReturnType<typeof hostHttp<C>>>;
  try {
    hosted = await hostHttp(def, { logDestination: 1 });
  } catch (err) {
    // A bad environment (exit 2) or the most common start-up failure, a port in use (exit 1): one line, not a stack.
    const usage = err instanceof HostError && err.kind === "usage";
    process.stderr.write(`${usage ? "" : `roadnerd-${def.name}: `}${(err as Error).message}\n`);
    process.exitCode = usage ? 2 : 1;
    return;
  }
  const { runtime, url, port } = hosted;
  const { config, log } = runtime;
  const close = (signal: string) => {
    log.info({ signal }, "closing");
    hosted.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.once(signal, () => close(signal));
  exitWithParent(config.ROADNERD_PARENT_PID, () => close("parent gone"));
  // The line orchestrators wait for: written even when LOG_LEVEL is above info (but not when silent).
  const announce = config.LOG_LEVEL === "silent" ? log : log.child({}, { level: "info" });
  announce.info({ url, port }, "listening");
  tuneMemoryOnceUp();
}
