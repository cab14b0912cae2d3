/** `roadnerd mcp` (stdio or --http) and `roadnerd up`: long-running commands that stop cleanly on a signal. */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createGatewayServer, type GatewayOptions } from "../gateway.ts";
import { serveGatewayHttp } from "../gateway-http.ts";
import type { Orchestrator } from "../orchestrator.ts";
import { err, out } from "./output.ts";

/** Resolves on the first SIGINT, SIGTERM or SIGHUP. */
const untilSignal = () =>
  new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGHUP", () => resolve("SIGHUP"));
  });

export async function mcpStdio(gateway: GatewayOptions): Promise<number> {
  const server = createGatewayServer(gateway);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
  });
  await server.connect(transport);
  await Promise.race([closed, untilSignal()]);
  await server.close();
  return 0;
}

/** The HTTP gateway, or undefined after one clear line when it cannot listen (a port in use is common). */
async function listenGateway(
  gateway: GatewayOptions,
  port: number,
): Promise<Awaited<ReturnType<typeof serveGatewayHttp>> | undefined> {
  try {
    return await serveGatewayHttp(gateway, port);
  } catch (e) {
    err(
      (e as NodeJS.ErrnoException).code === "EADDRINUSE"
        ? `roadnerd: 127.0.0.1:${port} (the MCP gateway) is already in use (another roadnerd?); stop it, or pass --port`
        : `roadnerd: the MCP gateway did not start: ${(e as Error).message}`,
    );
    return undefined;
  }
}

export async function mcpHttp(gateway: GatewayOptions, port: number): Promise<number> {
  const http = await listenGateway(gateway, port);
  if (!http) return 1;
  err(`roadnerd MCP gateway: ${http.url} (Ctrl-C stops)`);
  await untilSignal();
  await http.close();
  return 0;
}

/** Every server (or the `only` ones) on its default port, the HTTP gateway beside them, until a signal. */
export async function up(
  o: Orchestrator,
  gateway: GatewayOptions,
  port: number,
  only: readonly string[] = [],
): Promise<number> {
  const known = o.catalog.servers.map((s) => s.name);
  const unknown = only.filter((n) => !known.includes(n));
  if (unknown.length > 0) {
    err(`unknown server: ${unknown.join(", ")} (known: ${known.join(", ")})`);
    return 2;
  }
  const names = only.length > 0 ? known.filter((n) => only.includes(n)) : known;
  const attached = await Promise.allSettled(names.map((n) => o.attacher.ensure(n)));
  const http = await listenGateway(gateway, port);
  if (!http) {
    await o.attacher.close();
    return 1;
  }
  const rows: Array<[string, string, string]> = [["server", "url", "pid"]];
  names.forEach((name, i) => {
    const a = attached[i];
    if (a?.status === "fulfilled")
      rows.push([name, a.value.client.baseUrl, String(o.attacher.pidOf(name) ?? "remote")]);
    else rows.push([name, "FAILED (below)", "-"]);
  });
  rows.push(["gateway (MCP)", http.url, String(process.pid)]);
  const widths = [0, 1].map((c) => Math.max(...rows.map((r) => r[c]?.length ?? 0)));
  for (const r of rows) out(`${r[0].padEnd(widths[0] ?? 0)}  ${r[1].padEnd(widths[1] ?? 0)}  ${r[2]}`);
  names.forEach((name, i) => {
    const a = attached[i];
    if (a?.status === "rejected") err(`${name} did not start: ${(a.reason as Error)?.message ?? a.reason}`);
  });
  err("Ctrl-C stops every server and the gateway.");
  err(
    'Try, in another terminal: pnpm exec roadnerd triage   (or: pnpm exec roadnerd triage --symptom "port 8080 in use")',
  );
  await untilSignal();
  await http.close();
  await o.attacher.close();
  err("stopped.");
  return attached.every((a) => a.status === "fulfilled") ? 0 : 1;
}
