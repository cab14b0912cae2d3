/** `roadnerd mcp` (stdio or --http) and `roadnerd up`: long-running commands that stop cleanly on a signal. */
import { serveStdioSource } from "@roadnerd/conventions/internal";
import { errorInfo, UsageError } from "../errors.ts";
import { type GatewayOptions, gatewaySource } from "../gateway.ts";
import { type GatewayHttp, serveGatewayHttp } from "../gateway-http.ts";
import type { Orchestrator } from "../orchestrator.ts";
import { EXIT } from "./exit-codes.ts";
import { err, out } from "./output.ts";

/** Resolves on the first SIGINT, SIGTERM or SIGHUP. */
const untilSignal = () =>
  new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGHUP", () => resolve("SIGHUP"));
  });

/** The gateway on stdin/stdout through the kernel's stdio transport, until the client is done or a signal. */
export async function mcpStdio(gateway: GatewayOptions): Promise<number> {
  const stdio = await serveStdioSource(gatewaySource(gateway));
  await Promise.race([stdio.closed, untilSignal()]);
  await stdio.close();
  return EXIT.ok;
}

/** The HTTP gateway, or undefined after one clear line when it cannot listen (a port in use is common). */
async function listenGateway(gateway: GatewayOptions, port: number): Promise<GatewayHttp | undefined> {
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

/** Every server (or the `only` ones) on its default port, the HTTP gateway beside them, until a signal. */
export async function up(
  o: Orchestrator,
  gateway: GatewayOptions,
  port: number,
  only: readonly string[] = [],
): Promise<number> {
  const known = o.catalog.servers.map((s) => s.name);
  const unknown = only.filter((n) => !known.includes(n));
  if (unknown.length > 0) throw new UsageError(`unknown server: ${unknown.join(", ")} (known: ${known.join(", ")})`);
  const names = only.length > 0 ? known.filter((n) => only.includes(n)) : known;
  const attached = await Promise.allSettled(names.map((n) => o.attacher.ensure(n)));
  const http = await listenGateway(gateway, port);
  if (!http) {
    await o.attacher.close();
    return EXIT.failed;
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
    if (a?.status === "rejected") err(`${name} did not start: ${errorInfo(a.reason).message}`);
  });
  err(`The page: ${http.url.replace(/mcp$/, "")} (health, diagnose, connectivity, disk, ports, web)`);
  err("Ctrl-C stops every server and the gateway.");
  err(
    'Try, in another terminal: pnpm exec roadnerd triage   (or: pnpm exec roadnerd triage --symptom "port 8080 in use")',
  );
  await untilSignal();
  await http.close();
  await o.attacher.close();
  err("stopped.");
  return attached.every((a) => a.status === "fulfilled") ? EXIT.ok : EXIT.failed;
}
