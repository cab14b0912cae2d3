/**
 * proxy_env_status: the proxy variables of this server's own environment (it is started in the user's), which
 * proxy each common client takes from them and where they disagree, and where else the system sets a proxy.
 * Read-only; every credential masked; a PAC/WPAD address is named, never fetched.
 */
import { capList, limitInput, truncationFields } from "@roadnerd/conventions";
import { z } from "zod";
import { type ClientView, clientViews, disagreements, type Env } from "../env/client-rules.ts";
import { maskProxyValue } from "../env/proxy-value.ts";
import { readSystemProxies } from "../env/system-proxy.ts";
import { defineTool } from "../kit.ts";

/** Every variable a client reads, both cases. */
export const PROXY_VARIABLES = [
  "http_proxy",
  "HTTP_PROXY",
  "https_proxy",
  "HTTPS_PROXY",
  "no_proxy",
  "NO_PROXY",
  "all_proxy",
  "ALL_PROXY",
] as const;

const picked = z
  .object({ value: z.string().describe("masked"), from: z.string().describe("the variable it came from") })
  .nullable();

const output = {
  http_proxy: z.string().optional().describe("the proxy this server's HTTP client (undici) uses for http://, masked"),
  https_proxy: z.string().optional().describe("the proxy this server's HTTP client uses for https://, masked"),
  no_proxy: z.string().optional().describe("the no-proxy list this server's HTTP client uses"),
  variables: z
    .record(z.string(), z.string())
    .describe("every proxy variable set in this process's environment, both cases, masked ('' = set but empty)"),
  clients: z
    .array(
      z.object({
        client: z.enum(["curl", "wget", "python", "undici"]),
        http: picked,
        https: picked,
        no_proxy: picked,
        cidr_no_proxy: z.boolean().describe("NO_PROXY CIDR entries (10.0.0.0/8) work for this client"),
      }),
    )
    .describe("which proxy each common client takes from this environment"),
  warnings: z.array(z.string()).describe("where common clients disagree, and what to set"),
  system: z
    .array(z.object({ source: z.string(), path: z.string(), name: z.string(), value: z.string() }))
    .describe("proxies set elsewhere: /etc/environment, environment.d, systemd, apt, GNOME defaults (masked)"),
  pac: z
    .array(z.object({ path: z.string(), name: z.string(), value: z.string() }))
    .describe("PAC/WPAD addresses found (never fetched)"),
  unread: z.array(z.object({ source: z.string(), reason: z.string() })).describe("what could not be read, and why"),
  ...truncationFields,
};

function shown(view: ClientView): ClientView {
  const mask = (p: ClientView["http"]) => (p ? { value: maskProxyValue(p.value), from: p.from } : null);
  return { ...view, http: mask(view.http), https: mask(view.https), no_proxy: mask(view.no_proxy) };
}

/** The whole answer from one environment and one root: the tool passes process.env, tests pass their own. */
export async function proxyEnvReport(env: Env, root: string, signal: AbortSignal, limit?: number) {
  const variables: Record<string, string> = {};
  for (const name of PROXY_VARIABLES) {
    const value = env[name];
    if (value !== undefined) variables[name] = maskProxyValue(value);
  }
  const views = clientViews(env);
  const node = shown(views.find((v) => v.client === "undici") as ClientView);
  const system = await readSystemProxies(root, signal);
  const capped = capList(system.settings, limit);
  return {
    ...(node.http ? { http_proxy: node.http.value } : {}),
    ...(node.https ? { https_proxy: node.https.value } : {}),
    ...(node.no_proxy ? { no_proxy: node.no_proxy.value } : {}),
    variables,
    clients: views.map(shown),
    warnings: disagreements(env, views),
    system: capped.items,
    pac: system.pac,
    unread: system.unread,
    truncated: capped.omitted > 0,
    omitted: capped.omitted,
  };
}

export const proxyEnvStatus = defineTool({
  name: "proxy_env_status",
  summary: "Which proxy each client (curl, Python, Node…) uses; system proxy files.",
  input: { limit: limitInput },
  output,
  example: {},
  snapshotMs: 1000,
  view: (r) => ({
    http_proxy: r.http_proxy ?? "direct",
    https_proxy: r.https_proxy ?? "direct",
    no_proxy: r.no_proxy,
    warnings: r.warnings.length ? r.warnings.slice(0, 2) : undefined,
  }),
  summarize: (r) => {
    const http = r.http_proxy ?? "direct";
    const https = r.https_proxy ?? "direct";
    const warn = r.warnings.length > 0 ? `; ${r.warnings.length} client disagreement(s)` : "";
    return `http via ${http}, https via ${https}${warn}; ${r.system.length} system setting(s)`;
  },
  handler: (input, ctx) => proxyEnvReport(process.env, ctx.config.PROXY_ROOT, ctx.signal, input.limit),
});
