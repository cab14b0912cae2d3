/** Process entry for every server: HTTP by default, `--stdio` for MCP over stdin/stdout. */
import { createLogger } from "./logger.ts";
import { baseContext, buildApp, type ServerDef, serverConfig } from "./server.ts";

const HELP = (name: string, port: number, extraEnv: string[]) => `roadnerd-${name}: RoadNerd ${name} diagnostic server

usage: roadnerd-${name} [--stdio] [--help]

  (default)  serve HTTP+SSE and MCP (Streamable HTTP at /mcp) on HOST:PORT
  --stdio    serve MCP over stdin/stdout; logs go to stderr

env: HOST (default 127.0.0.1), PORT (default ${port}; 0 = any free port), LOG_LEVEL, AUTH_TOKEN,
     ALLOWED_HOSTS, ALLOWED_ORIGINS, OUTBOUND_ALLOW, OUTBOUND_DENY, EXEC_PATH${extraEnv.length ? `,\n     ${extraEnv.join(", ")}` : ""}
`;

export async function runMain(def: ServerDef, argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(HELP(def.name, def.defaultPort, Object.keys(def.env)));
    return;
  }
  const stdio = argv.includes("--stdio");
  const unknown = argv.filter((a) => a !== "--stdio");
  if (unknown.length) {
    process.stderr.write(
      `unknown argument: ${unknown.join(" ")}\n${HELP(def.name, def.defaultPort, Object.keys(def.env))}`,
    );
    process.exitCode = 2;
    return;
  }
  let config: ReturnType<typeof serverConfig>;
  try {
    config = serverConfig(def);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  if (stdio) {
    // stdout carries only protocol: every log line goes to stderr.
    const log = createLogger({ name: def.name, level: config.LOG_LEVEL, destination: 2 });
    const { serveStdio } = await import("./mcp.ts");
    await serveStdio(
      { name: `roadnerd-${def.name}`, version: def.version, instructions: def.instructions },
      def.tools,
      baseContext(def, config, log),
    );
    log.info({ transport: "stdio" }, "serving MCP over stdio");
    // Exit on a signal through process.exit, so the exec module's exit hook kills any live process group.
    for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => process.exit(0));
    return;
  }
  const log = createLogger({ name: def.name, level: config.LOG_LEVEL });
  const app = await buildApp(def, { logger: log });
  // Handlers before the listening line: a supervisor may stop us the moment it reads that line.
  const close = (signal: string) => {
    log.info({ signal }, "closing");
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGTERM", () => close("SIGTERM"));
  process.once("SIGINT", () => close("SIGINT"));
  const port = config.PORT ?? def.defaultPort;
  const address = await app.listen({ host: config.HOST, port });
  const bound = app.server.address();
  const url =
    typeof bound === "object" && bound
      ? `http://${bound.family === "IPv6" ? `[${bound.address}]` : bound.address}:${bound.port}`
      : address;
  // The line orchestrators wait for: written even when LOG_LEVEL is above info (but not when silent).
  const announce = config.LOG_LEVEL === "silent" ? log : log.child({}, { level: "info" });
  announce.info({ url, port: typeof bound === "object" && bound ? bound.port : port }, "listening");
}
