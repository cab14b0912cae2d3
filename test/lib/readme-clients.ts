/**
 * The MCP client entries as the README shows them (between <!-- clients:start --> and <!-- clients:end -->),
 * and one entry run as a desktop app runs it: a checkout's path put where the README says
 * /path/to/roadnerd-mcp, the command and args exactly as written, from another directory, with the app's small
 * environment; then initialize, tools/list and one tools/call through the SDK's client.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type CallToolResult, CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { CHECKOUT } from "../../scripts/lib/client-configs.ts";
import { CLIENTS_END, CLIENTS_START } from "../../scripts/lib/generated.ts";
import { readRootReadme } from "./readme-blocks.ts";

export interface Entry {
  type?: string;
  command?: string;
  args?: string[];
  url?: string;
}

/** Each client's config as the README shows it: its name and the entries it holds. */
export function readmeClientConfigs(readme = readRootReadme()): Array<{ client: string; entries: [string, Entry][] }> {
  const section = readme.slice(readme.indexOf(CLIENTS_START), readme.indexOf(CLIENTS_END));
  return [...section.matchAll(/^(.+?) — `[^`]+`:\n\n```json\n([\s\S]*?)```/gm)].map((m) => {
    const json = JSON.parse(m[2] ?? "{}") as { mcpServers?: Record<string, Entry>; servers?: Record<string, Entry> };
    return { client: m[1] ?? "", entries: Object.entries(json.mcpServers ?? json.servers ?? {}) };
  });
}

/** The entries that start a command (stdio), with the client that shows each. */
export const readmeStdioEntries = (readme = readRootReadme()) =>
  readmeClientConfigs(readme).flatMap((c) =>
    c.entries.filter(([, e]) => e.command).map(([name, entry]) => ({ client: c.client, name, entry })),
  );

/** A tool that answers in any network namespace, by the name the entry serves it under. */
export const toolToCall = (entry: Entry) => (entry.args?.includes("mcp") ? "network__route_info" : "route_info");

export interface EntryRun {
  server: string;
  tools: string[];
  called: string;
  result: CallToolResult;
}

/**
 * Start `entry` with `checkout` in place of the README's path, in `cwd` with a desktop app's environment, list
 * its tools and call toolToCall(entry). `wrap` runs the command inside something (a network namespace of the
 * test's own), as argv put before the entry's command.
 */
export async function runEntry(
  entry: Entry,
  checkout: string,
  cwd: string,
  options: { wrap?: string[]; env?: Record<string, string> } = {},
): Promise<EntryRun> {
  const argv = [entry.command ?? "", ...(entry.args ?? []).map((a) => a.replaceAll(CHECKOUT, checkout))];
  const [command = "", ...args] = [...(options.wrap ?? []), ...argv];
  const client = new Client({ name: "readme-clients", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args, cwd, env: options.env, stderr: "ignore" }));
  try {
    const server = client.getServerVersion()?.name ?? "";
    const tools = (await client.listTools()).tools.map((t) => t.name);
    const called = toolToCall(entry);
    const result = CallToolResultSchema.parse(await client.callTool({ name: called, arguments: {} }));
    return { server, tools, called, result };
  } finally {
    await client.close();
  }
}
