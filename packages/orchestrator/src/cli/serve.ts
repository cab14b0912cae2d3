/** `roadnerd mcp` (stdio or --http), and the gateway `roadnerd up` serves: long-running, stopped cleanly by a signal. */
import { serveStdioSource } from "@roadnerd/conventions/internal";
import { type GatewayOptions, gatewaySource } from "../gateway.ts";
import { type GatewayHttp, serveGatewayHttp } from "../gateway-http.ts";
import { EXIT } from "./exit-codes.ts";
import { err } from "./output.ts";

/** Resolves on the first SIGINT, SIGTERM or SIGHUP. */
export const untilSignal = () =>
  new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGHUP", () => resolve("SIGHUP"));
  });

/** The gateway on stdin/stdout through the kernel's stdio transport, until the client is done or a signal. */
export async function mcpStdio(gateway: GatewayOptions): Promise<number> {
  const stdio = await serveStdioSource(gatewaySource(gateway));
  const signal = await Promise.race([stdio.closed.then(() => undefined), untilSignal()]);
  if (!signal) {
    await stdio.close();
    return EXIT.ok;
  }
  // A signal: the calls in flight get their result within the grace period, else E_BUSY "shutting down"; the
  // servers are stopped; then the process leaves. Answers a client never reads (a full pipe) would keep it
  // alive: the transport gives up on them after a moment, and the exit drops them.
  await stdio.drain();
  await stdio.close();
  await gateway.attacher.close();
  process.exit(EXIT.ok);
}

/** The HTTP gateway, or undefined after one clear line when it cannot listen (a port in use is common). */
export async function listenGateway(gateway: GatewayOptions, port: number): Promise<GatewayHttp | undefined> {
  try {
    return await serveGatewayHttp(gateway, port);
  } catch (e) {
    err(
      e instanceof Error && "code" in e && e.code === "EADDRINUSE"
        ? `roadnerd: 127.0.0.1:${port} (the MCP gateway) is already in use (another roadnerd?); stop it, or pass --port`
        : `roadnerd: the MCP gateway did not start: ${e instanceof Error ? e.message : String(e)}`,
    );
    return undefined;
  }
}

export async function mcpHttp(gateway: GatewayOptions, port: number): Promise<number> {
  const http = await listenGateway(gateway, port);
  if (!http) return EXIT.failed;
  err(`roadnerd MCP gateway: ${http.url} (Ctrl-C stops)`);
  await untilSignal();
  await http.close();
  return EXIT.ok;
}
