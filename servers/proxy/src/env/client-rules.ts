/**
 * Which proxy each common client takes from one environment, by its own rules (measured on Debian 12
 * with curl 7.88, wget 1.21, Python 3.11 requests and undici 7.30):
 * - curl: lower-case http_proxy only for http (HTTP_PROXY is ignored on purpose, httpoxy); https_proxy or
 *   HTTPS_PROXY; ALL_PROXY as fallback; NO_PROXY entries may be CIDRs.
 * - wget: lower-case only, no ALL_PROXY, no CIDRs.
 * - Python (urllib's getproxies, used by requests): any case, lower-case wins, and an empty lower-case variable
 *   removes the upper-case one; ALL_PROXY as fallback; requests honours CIDRs.
 * - undici (Node's EnvHttpProxyAgent, this server's client): `http_proxy ?? HTTP_PROXY`; https falls back to the
 *   http proxy; `no_proxy ?? NO_PROXY`, so an empty `no_proxy=` hides NO_PROXY; no CIDRs.
 */
export type Env = Readonly<Record<string, string | undefined>>;

export const CLIENTS = ["curl", "wget", "python", "undici"] as const;
export type ClientName = (typeof CLIENTS)[number];

/** A value and the variable it came from. */
export interface Picked {
  value: string;
  from: string;
}

export interface ClientView {
  client: ClientName;
  http: Picked | null;
  https: Picked | null;
  no_proxy: Picked | null;
  /** NO_PROXY entries such as 10.0.0.0/8 match addresses in that range. */
  cidr_no_proxy: boolean;
}

/** First of `names` that is set and non-empty. */
function firstSet(env: Env, names: readonly string[]): Picked | null {
  for (const from of names) {
    const value = env[from];
    if (value !== undefined && value !== "") return { value, from };
  }
  return null;
}

/** JavaScript's `a ?? b`: the first that is defined, even when empty (an empty one means "none"). */
function firstDefined(env: Env, names: readonly string[]): Picked | null {
  for (const from of names) {
    const value = env[from];
    if (value !== undefined) return value === "" ? null : { value, from };
  }
  return null;
}

function curl(env: Env): ClientView {
  const all = firstSet(env, ["all_proxy", "ALL_PROXY"]);
  return {
    client: "curl",
    http: firstSet(env, ["http_proxy"]) ?? all,
    https: firstSet(env, ["https_proxy", "HTTPS_PROXY"]) ?? all,
    no_proxy: firstSet(env, ["no_proxy", "NO_PROXY"]),
    cidr_no_proxy: true,
  };
}

function wget(env: Env): ClientView {
  return {
    client: "wget",
    http: firstSet(env, ["http_proxy"]),
    https: firstSet(env, ["https_proxy"]),
    no_proxy: firstSet(env, ["no_proxy"]),
    cidr_no_proxy: false,
  };
}

/** urllib.request.getproxies_environment, step by step. */
function python(env: Env): ClientView {
  const proxies = new Map<string, Picked>();
  for (const [name, value] of Object.entries(env)) {
    const lower = name.toLowerCase();
    if (value && lower.endsWith("_proxy")) proxies.set(lower.slice(0, -6), { value, from: name });
  }
  for (const [name, value] of Object.entries(env)) {
    if (!name.endsWith("_proxy")) continue;
    const key = name.toLowerCase().slice(0, -6);
    if (value) proxies.set(key, { value, from: name });
    else proxies.delete(key);
  }
  const all = proxies.get("all") ?? null;
  return {
    client: "python",
    http: proxies.get("http") ?? all,
    https: proxies.get("https") ?? all,
    no_proxy: proxies.get("no") ?? null,
    cidr_no_proxy: true,
  };
}

function undici(env: Env): ClientView {
  const http = firstDefined(env, ["http_proxy", "HTTP_PROXY"]);
  const httpsOwn = firstDefined(env, ["https_proxy", "HTTPS_PROXY"]);
  return {
    client: "undici",
    http,
    https: httpsOwn ?? http,
    no_proxy: firstDefined(env, ["no_proxy", "NO_PROXY"]),
    cidr_no_proxy: false,
  };
}

export function clientViews(env: Env): ClientView[] {
  return [curl(env), wget(env), python(env), undici(env)];
}

const CIDR = /^\s*[0-9a-f.:]+\/\d{1,3}\s*$/i;

/** The cases where common clients go different ways, each in one line a user can act on. */
export function disagreements(env: Env, views: readonly ClientView[]): string[] {
  const out: string[] = [];
  const set = (n: string) => env[n] !== undefined && env[n] !== "";
  if (set("HTTP_PROXY") && env.http_proxy === undefined) {
    out.push(
      "HTTP_PROXY is set without http_proxy: curl and wget ignore it, undici and Python use it; set http_proxy too",
    );
  }
  if (set("HTTPS_PROXY") && env.https_proxy === undefined) {
    out.push("HTTPS_PROXY is set without https_proxy: wget ignores it; set https_proxy too");
  }
  const nodeView = views.find((v) => v.client === "undici");
  if (!set("https_proxy") && !set("HTTPS_PROXY") && nodeView?.http) {
    out.push(
      "no https_proxy: undici sends https through the http proxy, curl, wget and Python go direct for https; set https_proxy",
    );
  }
  if (env.no_proxy === "" && set("NO_PROXY")) {
    out.push("no_proxy is set but empty: it hides NO_PROXY from undici and Python (curl and wget still use NO_PROXY)");
  }
  if (env.http_proxy === "" && set("HTTP_PROXY")) {
    out.push("http_proxy is set but empty: undici and Python go direct, ignoring HTTP_PROXY");
  }
  const noProxies = new Set(views.map((v) => v.no_proxy?.value).filter((v): v is string => v !== undefined));
  if ([...noProxies].some((v) => v.split(/[,\s]+/).some((e) => CIDR.test(e)))) {
    out.push(
      "NO_PROXY has CIDR entries: only curl and Python requests honour them; undici and wget treat them as names",
    );
  }
  if (set("all_proxy") || set("ALL_PROXY")) {
    out.push("ALL_PROXY is used only by curl and Python, as a fallback; wget and undici ignore it");
  }
  if (env.no_proxy === undefined && set("NO_PROXY")) {
    out.push("NO_PROXY is set without no_proxy: wget ignores it; set no_proxy too");
  }
  return out;
}
