/**
 * One server's HTTP surface listening: its runtime (config from the env given, its own logger, bounds and
 * resources), its Fastify app, bound to HOST:PORT. A server's main (one process per server) and `roadnerd up`
 * (every server in one process, each with its own runtime and port) both start servers this way.
 */
import type { FastifyInstance } from "fastify";
import type { BaseConfig } from "../define/config.ts";
import type { ServerDef } from "../define/server-def.ts";
import { DiagError } from "../errors/errors.ts";
import { createRuntime, type Runtime, type RuntimeOptions } from "../runtime/runtime.ts";
import { isLoopback } from "./guards.ts";

export interface HostedHttp<C = BaseConfig> {
  readonly runtime: Runtime<C>;
  readonly url: string;
  readonly port: number;
  /** Streams end with `end`, connections close, the runtime's resources close. */
  close(): Promise<void>;
}

export interface HostHttpOptions extends RuntimeOptions {
  /** Runs each request's handling (and the runtime's creation) inside it: `up` uses it to tell servers' faults apart. */
  around?: <T>(run: () => T) => T;
}

/** Why a server could not start: `usage` is its config (exit 2), `listen` its address (exit 1); one line each. */
export class HostError extends Error {
  constructor(
    readonly kind: "usage" | "listen",
    message: string,
  ) {
    super(message);
    this.name = "HostError";
  }
}

/** The refusal and the three common listen failures as one line, not a stack. */
function listenFailure(err: unknown, name: string, host: string, port: number): string {
  const code = err instanceof Error && "code" in err ? err.code : undefined;
  if (code === "EADDRINUSE")
    return `${host}:${port} is already in use (another roadnerd-${name}?); stop it, or set PORT to another port (PORT=0: any free one)`;
  if (code === "EADDRNOTAVAIL") return `${host} is not an address of this machine; set HOST`;
  if (code === "EACCES") return `not allowed to bind ${host}:${port}; choose a port above 1023`;
  return `cannot listen on ${host}:${port}: ${err instanceof Error ? err.message : String(err)}`;
}

/**
 * A bind that other machines (or containers) can reach, anything but loopback, needs a token (anyone who
 * reaches it could run the tools) and TLS (the token would cross the network in clear), each with an explicit
 * opt-out for networks that are private by construction. Undefined when the bind may go ahead.
 */
function remoteBindRefusal(config: BaseConfig): string | undefined {
  if (isLoopback(config.HOST.replace(/^\[|\]$/g, "").toLowerCase())) return undefined;
  if (!config.AUTH_TOKEN && !config.ALLOW_UNAUTHENTICATED) {
    return (
      `refusing to bind ${config.HOST} without AUTH_TOKEN: anyone who can reach it could run these tools. ` +
      "Set AUTH_TOKEN (16+ chars), bind 127.0.0.1, or — only for a container whose port is published on the " +
      "host's loopback — set ALLOW_UNAUTHENTICATED=1"
    );
  }
  if (!config.TLS_CERT_FILE && !config.ALLOW_PLAINTEXT) {
    return (
      `refusing to bind ${config.HOST} without TLS: its token and answers would cross the network in clear. ` +
      "Set TLS_CERT_FILE and TLS_KEY_FILE (PEM), bind 127.0.0.1, or — only where the network is private by " +
      "construction (a pod network, a container port published on the host's loopback) — set ALLOW_PLAINTEXT=1"
    );
  }
  return undefined;
}

export async function hostHttp<C extends BaseConfig>(
  def: ServerDef<C>,
  options: HostHttpOptions = {},
): Promise<HostedHttp<C>> {
  const around = options.around ?? ((run) => run());
  let runtime: Runtime<C>;
  try {
    runtime = around(() => createRuntime(def, options));
  } catch (err) {
    throw new HostError("usage", err instanceof Error ? err.message : String(err));
  }
  const { config } = runtime;
  const refusal = remoteBindRefusal(config);
  if (refusal) {
    await runtime.close();
    throw new HostError("usage", refusal);
  }
  const { buildHttpApp } = await import("./http-app.ts");
  let app: FastifyInstance;
  try {
    app = await buildHttpApp(runtime);
  } catch (err) {
    // Unreadable or mismatched TLS files: a usage error, said in one line.
    await runtime.close();
    if (err instanceof DiagError) throw new HostError("usage", err.message);
    throw err;
  }
  if (options.around) wrapRequests(app, options.around);
  const port = config.PORT ?? def.defaultPort;
  try {
    await app.listen({ host: config.HOST, port });
  } catch (err) {
    await app.close().catch(() => {});
    throw new HostError("listen", listenFailure(err, def.name, config.HOST, port));
  }
  const bound = app.server.address();
  if (typeof bound !== "object" || !bound) {
    await app.close().catch(() => {});
    throw new HostError("listen", `cannot listen on ${config.HOST}:${port}: no address`);
  }
  runtime.outbound.setSelf(bound.address, bound.port);
  const scheme = config.TLS_CERT_FILE ? "https" : "http";
  const url = `${scheme}://${bound.family === "IPv6" ? `[${bound.address}]` : bound.address}:${bound.port}`;
  return { runtime, url, port: bound.port, close: () => app.close() };
}

/** Each request's listener called inside `around`, so whatever a tool starts (timers, promises) runs inside it too. */
function wrapRequests(app: FastifyInstance, around: <T>(run: () => T) => T): void {
  const listeners = app.server.listeners("request");
  app.server.removeAllListeners("request");
  for (const listener of listeners) {
    app.server.on("request", (...args: unknown[]) => around(() => Reflect.apply(listener, app.server, args)));
  }
}
