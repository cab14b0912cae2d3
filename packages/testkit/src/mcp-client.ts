/**
 * An official MCP SDK client connected to a server the test started: over Streamable HTTP at `<url>/mcp`, or
 * over stdio to a built server's `main.js --stdio` (optionally behind a wrapper such as nsenter). The stdio
 * session keeps the server's stderr, so a test can check that only protocol went to stdout and JSON logs to
 * stderr.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { serverEntry, spawnServer } from "./spawn-server.ts";

export interface McpSession {
  client: Client;
  /** The server's log lines so far: its stderr over stdio, its stdout when openMcp started it for HTTP. */
  logLines(): string[];
  close(): Promise<void>;
}

const clientInfo = { name: "roadnerd-test", version: "1.0.0" };

export async function mcpOverHttp(baseUrl: string): Promise<McpSession> {
  const client = new Client(clientInfo);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`)));
  return { client, logLines: () => [], close: () => client.close() };
}

export interface StdioOptions {
  /** The server's environment besides PATH. */
  env?: Record<string, string>;
  /** A command the server runs under, e.g. `nsenter -t <pid> -p -m …`. */
  wrap?: readonly string[];
}

export async function mcpOverStdio(server: string, options: StdioOptions = {}): Promise<McpSession> {
  const argv = [...(options.wrap ?? []), process.execPath, serverEntry(server), "--stdio"];
  const transport = new StdioClientTransport({
    command: argv[0] as string,
    args: argv.slice(1),
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...options.env },
    stderr: "pipe",
  });
  const stderr: string[] = [];
  transport.stderr?.on("data", (d: Buffer) => stderr.push(d.toString()));
  const client = new Client(clientInfo);
  await client.connect(transport);
  return {
    client,
    logLines: () => stderr.join("").split("\n").filter(Boolean),
    close: () => client.close(),
  };
}

/**
 * A built server as an MCP client meets it: `http` starts it (spawnServer) and connects to its /mcp, `stdio`
 * runs `main.js --stdio`. `close()` ends the client and the server either way.
 */
export async function openMcp(
  transport: "http" | "stdio",
  server: string,
  options: StdioOptions = {},
): Promise<McpSession> {
  if (transport === "stdio") return mcpOverStdio(server, options);
  const spawned = await spawnServer(server, {
    env: options.env ?? {},
    ...(options.wrap ? { wrap: [...options.wrap] } : {}),
  });
  try {
    const session = await mcpOverHttp(spawned.url);
    return {
      ...session,
      logLines: () => [...spawned.lines],
      close: async () => {
        await session.close();
        await spawned.stop();
      },
    };
  } catch (err) {
    await spawned.stop();
    throw err;
  }
}
