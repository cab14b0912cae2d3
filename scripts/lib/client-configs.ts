/**
 * The MCP client entries the README shows, each written once here: generated into the README (between
 * <!-- clients:start --> and <!-- clients:end -->) and run by test/client-configs.test.ts, which puts this
 * checkout's path in place of CHECKOUT, starts each command line exactly as written and lists tools through
 * it. They run this checkout's bundles with node (the packages are not on the npm registry), or reach the
 * gateway over HTTP (`pnpm start`, or docker compose). The same from the packed packages (npx) is
 * test/packages.test.ts's.
 */
export const CLI_PACKAGE = "roadnerd-mcp";
export const GATEWAY_URL = "http://127.0.0.1:7100/mcp";
/** Where the README's configs say the checkout is; `pwd` in yours prints what to put there. */
export const CHECKOUT = "/path/to/roadnerd-mcp";

export interface StdioEntry {
  command: string;
  args: string[];
}

/** The gateway over stdio: every tool of every server plus `triage`, servers started on first use. */
export const gatewayStdio: StdioEntry = {
  command: "node",
  args: [`${CHECKOUT}/packages/orchestrator/dist/main.js`, "mcp"],
};
/** One server alone over stdio (network here; any `servers/<server>/dist/main.js`). */
export const oneServerStdio: StdioEntry = {
  command: "node",
  args: [`${CHECKOUT}/servers/network/dist/main.js`, "--stdio"],
};
/** The same two from the packed packages, as the MCP ecosystem writes them once they are published. */
export const npxGatewayStdio: StdioEntry = { command: "npx", args: ["-y", CLI_PACKAGE, "mcp"] };
export const npxServerStdio: StdioEntry = { command: "npx", args: ["-y", "@roadnerd/network", "--stdio"] };

export interface ClientConfig {
  client: string;
  /** Where the client reads it. */
  file: string;
  json: unknown;
}

export const clientConfigs: ClientConfig[] = [
  {
    client: "Claude Desktop",
    file: "claude_desktop_config.json",
    json: { mcpServers: { roadnerd: gatewayStdio, "roadnerd-network": oneServerStdio } },
  },
  {
    client: "VS Code",
    file: ".vscode/mcp.json",
    json: { servers: { roadnerd: { type: "stdio", ...gatewayStdio } } },
  },
  {
    client: "Cursor",
    file: "~/.cursor/mcp.json (or .cursor/mcp.json in a project)",
    json: { mcpServers: { roadnerd: gatewayStdio } },
  },
  {
    client: "Any Streamable HTTP client, to the gateway of `pnpm start` or docker compose (VS Code form)",
    file: ".vscode/mcp.json",
    json: { servers: { roadnerd: { type: "http", url: GATEWAY_URL } } },
  },
];

/** JSON as a person writes it: indented, with a short list of strings on one line. */
function pretty(json: unknown): string {
  return JSON.stringify(json, null, 2).replace(
    /\[\n\s+("[^"\n]*"(?:,\n\s+"[^"\n]*")*)\n\s+\]/g,
    (_, items: string) => `[${items.split(/,\n\s+/).join(", ")}]`,
  );
}

export function renderClientConfigs(): string {
  return clientConfigs.map((c) => `${c.client} — \`${c.file}\`:\n\n\`\`\`json\n${pretty(c.json)}\n\`\`\``).join("\n\n");
}
