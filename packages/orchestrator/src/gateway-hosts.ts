/**
 * The gateway's side of a fleet (ROADNERD_HOSTS): the `host` argument every relayed tool and `triage` take
 * when hosts are configured (default `local`, this machine, where attach-on-request applies), and the
 * `hosts` tool that reports each host's servers' health. Without hosts the gateway's tools are unchanged.
 */
import { DiagError, maskText } from "@roadnerd/conventions";
import { inputJsonSchema, type McpTool, outputJsonSchema } from "@roadnerd/conventions/internal";
import { z } from "zod";
import type { Attacher } from "./attach.ts";
import { LOCAL_HOST } from "./hosts.ts";

export const HOSTS_TOOL = "hosts";
/** How long the hosts tool waits for one server's /healthz. */
export const HOST_HEALTH_TIMEOUT_MS = 3_000;

const hostDescription = (hosts: readonly string[]) =>
  `which machine: ${LOCAL_HOST} (default, this one) or a host of ROADNERD_HOSTS (${hosts.join(", ")})`;

/** The tool's listed input schema with `host` beside its own parameters. */
export function withHostArg(listed: McpTool["listed"], hosts: readonly string[]): McpTool["listed"] {
  if (!hosts.length) return listed;
  const host = { type: "string", enum: [LOCAL_HOST, ...hosts], description: hostDescription(hosts) };
  return { ...listed, inputSchema: { ...listed.inputSchema, properties: { ...listed.inputSchema.properties, host } } };
}

/**
 * A call's `host` taken off its arguments (the tool's own schema is strict and does not know it): which host
 * (undefined: this machine) and the rest. Without hosts configured, the arguments pass through untouched.
 */
export function splitHost(
  args: Record<string, unknown> | undefined,
  hosts: readonly string[],
): { host: string | undefined; args: Record<string, unknown> } {
  if (!hosts.length || !args || !("host" in args)) return { host: undefined, args: args ?? {} };
  const { host, ...rest } = args;
  if (host === undefined || host === LOCAL_HOST) return { host: undefined, args: rest };
  if (typeof host !== "string" || !hosts.includes(host)) {
    throw new DiagError(
      "E_INVALID_INPUT",
      `host: expected one of ${[LOCAL_HOST, ...hosts].join(", ")}; got ${JSON.stringify(host)}`,
      {
        hint: `e.g. {"host":"${hosts[0]}"}; the hosts tool lists them with their health`,
      },
    );
  }
  return { host, args: rest };
}

const healthError = z.strictObject({
  code: z
    .string()
    .describe(
      "E_CONN_REFUSED (nothing listens), E_UNREACHABLE, E_DNS_FAIL, E_TIMEOUT, or E_ATTACH (tls in the message for a certificate problem; also a cut connection or an answer that is not a RoadNerd server's)",
    ),
  message: z.string().describe("what failed, with the URL"),
  hint: z.string().optional().describe("what to change"),
});

const hostsOutput = z.strictObject({
  hosts: z
    .array(
      z.strictObject({
        host: z.string().describe("the host's name in ROADNERD_HOSTS"),
        ok: z.boolean().describe("every server of the host answered /healthz"),
        servers: z.array(
          z.strictObject({
            server: z.string().describe("server name"),
            url: z.string().describe("where the gateway reaches it"),
            ok: z.boolean().describe("it answered /healthz as that server"),
            version: z.string().optional().describe("its version, when it answered"),
            error: healthError.optional().describe("why not, when it did not"),
          }),
        ),
      }),
    )
    .describe(`every host of ROADNERD_HOSTS (${LOCAL_HOST}, this machine, attaches its servers on request)`),
});
type HostsOutput = z.output<typeof hostsOutput>;

/** Each host's servers' /healthz, all at once, each within HOST_HEALTH_TIMEOUT_MS. */
export async function fleetHealth(attacher: Attacher, signal?: AbortSignal): Promise<HostsOutput> {
  const hosts = await Promise.all(
    attacher.hostNames().map(async (host) => {
      const servers = await Promise.all(
        [...(attacher.hostServers(host) ?? new Map())].map(async ([server, remote]) => {
          const timeout = AbortSignal.timeout(HOST_HEALTH_TIMEOUT_MS);
          const health = await attacher.health(server, host, signal ? AbortSignal.any([signal, timeout]) : timeout);
          // A URL's userinfo is a credential: the tool's answer shows where, never who.
          return { server, url: maskText(remote.url), ...health };
        }),
      );
      return { host, ok: servers.every((s) => s.ok), servers };
    }),
  );
  return { hosts };
}

/**
 * One line per host, then one per server that is not ok. A host that is not ok names only its failing servers
 * (it said `NOT ok (network, ports)` when only ports failed), and those that answered after them.
 */
export function hostsView(result: Record<string, unknown>): string {
  const parsed = hostsOutput.safeParse(result);
  if (!parsed.success) return JSON.stringify(result);
  const names = (servers: ReadonlyArray<{ server: string }>) => servers.map((s) => s.server).join(", ");
  return parsed.data.hosts
    .flatMap((h) => [
      h.ok
        ? `${h.host}: ok (${names(h.servers)})`
        : `${h.host}: NOT ok (${names(h.servers.filter((s) => !s.ok))})${
            h.servers.some((s) => s.ok) ? `; ok: ${names(h.servers.filter((s) => s.ok))}` : ""
          }`,
      ...h.servers
        .filter((s) => !s.ok)
        .map((s) => `  ${s.server}: ${s.error?.code ?? "failed"} ${s.error?.message ?? ""}`),
    ])
    .join("\n");
}

/** `hosts`: the fleet's health, for an MCP client deciding which host to ask. */
export function hostsTool(attacher: Attacher): McpTool {
  const input = z.strictObject({});
  return {
    listed: {
      name: HOSTS_TOOL,
      title: "hosts",
      description: "The hosts of this gateway's fleet (ROADNERD_HOSTS) and whether each one's servers answer.",
      inputSchema: { ...inputJsonSchema(input), type: "object" },
      outputSchema: { ...outputJsonSchema(hostsOutput), type: "object" },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    call: async (args, signal) => {
      const parsed = input.safeParse(args ?? {});
      if (!parsed.success) throw new DiagError("E_INVALID_INPUT", "hosts takes no arguments");
      return fleetHealth(attacher, signal);
    },
    view: hostsView,
  };
}
