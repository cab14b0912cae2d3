/**
 * One checked, pinned HTTP(S) request hop, and a bounded redirect loop in which every hop takes the same
 * path: the kernel's dial (resolve with the policy, connect to exactly the checked address, timings and TLS
 * facts) as undici's connector, read only a capped body prefix. GET and HEAD only. Target failures come back
 * as a diagnosis (`failure`), policy refusals are thrown (E_FORBIDDEN).
 */
import type { Client } from "undici";
import { DEFAULT_TIMEOUT_MS } from "../define/fields.ts";
import { DiagError } from "../errors/errors.ts";
import { hostPort } from "../errors/socket-errors.ts";
import { isSecretHeader } from "../runtime/mask.ts";
import { dialConnection } from "./dial-connector.ts";
import { HOP_HEADERS } from "./hop.ts";
import type { OutboundPolicy } from "./policy.ts";
import { portOf } from "./port-of.ts";
import { type ProbeFailure, type ProbePhase, toProbeFailure } from "./probe-failure.ts";
import { type PhaseTiming, spanMs } from "./timing.ts";
import type { TlsFacts } from "./tls-facts.ts";

/** Enough of a body to recognise a login page or an expected answer; never the whole thing. */
export const DEFAULT_BODY_PREFIX_BYTES = 4096;
export const DEFAULT_MAX_REDIRECTS = 5;
export const MAX_REDIRECTS = 10;
export const PROBE_USER_AGENT = "roadnerd-probe/0.1";

export type ProbeMethod = "GET" | "HEAD";

/** Phase durations in ms (the kernel's one timing shape); `total` is the whole hop (body prefix included). */
export type HopTiming = PhaseTiming;

export interface HopResponse {
  url: string;
  /** The checked address the connection was pinned to. */
  address: string;
  port: number;
  status: number;
  headers: Record<string, string | string[]>;
  /** The raw Location header, if any. */
  location: string | null;
  /** Location resolved against this hop's URL; null when absent or not a URL. */
  redirectUrl: string | null;
  /** The body prefix as UTF-8 text (empty for HEAD). */
  body: string;
  /** Bytes read into `body`. */
  bodyBytes: number;
  /** False when the cap or the deadline cut the body. */
  bodyComplete: boolean;
  timing: HopTiming;
  tls: TlsFacts | null;
}

export interface HopFailure extends ProbeFailure {
  url: string;
  timing: HopTiming;
  /** Set when the handshake finished before the failure (e.g. a slow first byte over https). */
  tls: TlsFacts | null;
}

export type HopResult = { ok: true; response: HopResponse } | { ok: false; failure: HopFailure };

export interface HttpRequestOptions {
  method?: ProbeMethod;
  headers?: Readonly<Record<string, string>>;
  /** Aborts the work (the caller went away, the tool's deadline). */
  signal?: AbortSignal;
  /** The probe's own deadline for the whole request (or chain). */
  timeoutMs?: number;
  maxBodyBytes?: number;
  /** Offer h2 by ALPN (default true). */
  offerH2?: boolean;
}

export interface HttpProbeOptions extends HttpRequestOptions {
  followRedirects?: boolean;
  maxRedirects?: number;
  /** A redirect to a denied target: "throw" E_FORBIDDEN (default) or "stop" the chain and report it. */
  deniedRedirect?: "throw" | "stop";
}

export interface ChainStop {
  /** The redirect target we did not fetch. */
  url: string;
  reason: "redirect_limit" | "denied" | "bad_location";
  detail: string;
}

export interface HttpProbeResult {
  /** Every response received, in order (redirects first). */
  hops: HopResponse[];
  /** The last response, null when the first hop failed. */
  final: HopResponse | null;
  /** URL of the last response, or of the hop that failed. */
  finalUrl: string;
  failure: HopFailure | null;
  stopped: ChainStop | null;
  totalMs: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export function isRedirectStatus(status: number): boolean {
  return REDIRECTS.has(status);
}

interface Deadline {
  signal: AbortSignal;
  timeoutMs: number;
  dispose(): void;
}

function startDeadline(timeoutMs: number, outer: AbortSignal | undefined): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error("probe deadline")), timeoutMs);
  const onOuter = () => controller.abort(outer?.reason);
  if (outer?.aborted) onOuter();
  else outer?.addEventListener("abort", onOuter, { once: true });
  return {
    signal: controller.signal,
    timeoutMs,
    dispose() {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onOuter);
    },
  };
}

function parseTarget(raw: string | URL): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DiagError("E_INVALID_INPUT", `not a URL: ${String(raw).slice(0, 80)}`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") {
    throw new DiagError("E_INVALID_INPUT", `only http:// and https:// URLs can be probed: ${url.protocol}`);
  }
  return url;
}

async function readPrefix(
  body: AsyncIterable<unknown>,
  max: number,
): Promise<{ text: string; bytes: number; complete: boolean }> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let complete = true;
  try {
    for await (const chunk of body) {
      const buf = chunk as Buffer;
      const room = max - bytes;
      if (buf.length > room) {
        chunks.push(buf.subarray(0, room));
        bytes += room;
        complete = false;
        break;
      }
      chunks.push(buf);
      bytes += buf.length;
    }
  } catch {
    // The deadline or a reset mid-body: the prefix we have is still evidence.
    complete = false;
  }
  return { text: Buffer.concat(chunks).toString("utf8"), bytes, complete };
}

function requestHeaders(extra: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const headers: Record<string, string> = { "user-agent": PROBE_USER_AGENT, accept: "*/*" };
  for (const [name, value] of Object.entries(extra ?? {})) headers[name.toLowerCase()] = value;
  // Last, so a caller's headers cannot drop it: a RoadNerd server refuses a tool's own request (ADR 0047).
  return { ...headers, ...HOP_HEADERS };
}

/** One hop, inside a deadline the caller owns. */
async function hop(
  policy: OutboundPolicy,
  url: URL,
  options: HttpRequestOptions,
  deadline: Deadline,
): Promise<HopResult> {
  const started = performance.now();
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const https = url.protocol === "https:";
  const port = portOf(url);
  const method = options.method ?? "GET";
  const conn = dialConnection({ host, port, tls: https, offerH2: options.offerH2 ?? true }, policy, deadline.signal);
  let client: Client | undefined;
  let headersAt: number | undefined;

  // Until the dial answers, a failure is its own (DialError says its phase); after it, the request's.
  const phase = (): ProbePhase => (!conn.dialed() ? "dns" : headersAt === undefined ? "request" : "body");
  const timing = (): HopTiming => {
    const dialled = conn.dialed()?.timing ?? conn.failure()?.timing;
    return {
      dns: dialled?.dns ?? spanMs(started),
      connect: dialled?.connect ?? 0,
      tls: https ? (dialled?.tls ?? 0) : 0,
      ttfb: spanMs(conn.readyAt(), headersAt),
      total: spanMs(started),
    };
  };

  try {
    // The origin keeps the URL's host for the Host header and SNI; the connector ignores it and dials the pin.
    // undici is loaded on the first probe, not at start-up: start-up is the orchestrator's attach latency.
    const Client = await loadUndiciClient();
    client = new Client(url.origin, {
      connect: conn.connector,
      allowH2: options.offerH2 ?? true,
      pipelining: 1,
      headersTimeout: deadline.timeoutMs * 2,
      bodyTimeout: deadline.timeoutMs * 2,
    });
    const res = await client.request({
      path: `${url.pathname}${url.search}`,
      method,
      headers: requestHeaders(options.headers),
      signal: deadline.signal,
    });
    headersAt = performance.now();
    const max = method === "HEAD" ? 0 : (options.maxBodyBytes ?? DEFAULT_BODY_PREFIX_BYTES);
    const body = max > 0 ? await readPrefix(res.body, max) : { text: "", bytes: 0, complete: true };
    if (max === 0) res.body.resume();
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers[name] = value;
    const location = res.headers.location;
    return {
      ok: true,
      response: {
        url: url.href,
        address: conn.dialed()?.address ?? host,
        port,
        status: res.statusCode,
        headers,
        location: typeof location === "string" ? location : null,
        redirectUrl: typeof location === "string" ? resolvedUrl(location, url) : null,
        body: body.text,
        bodyBytes: body.bytes,
        bodyComplete: body.complete,
        timing: timing(),
        tls: conn.dialed()?.tls ?? null,
      },
    };
  } catch (err) {
    const dialled = conn.dialed();
    const failure = toProbeFailure(err, {
      phase: phase(),
      host,
      where: dialled ? hostPort(dialled.address, port) : undefined,
      timeoutMs: deadline.timeoutMs,
      timedOut: deadline.signal.aborted,
    });
    return { ok: false, failure: { ...failure, url: url.href, timing: timing(), tls: dialled?.tls ?? null } };
  } finally {
    client?.destroy().catch(() => {});
    conn.close();
  }
}

/** One request, no redirects followed. Throws E_FORBIDDEN / E_INVALID_INPUT; target failures are `ok: false`. */
export async function httpRequest(
  policy: OutboundPolicy,
  target: string | URL,
  options: HttpRequestOptions = {},
): Promise<HopResult> {
  const url = parseTarget(target);
  const deadline = startDeadline(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, options.signal);
  try {
    return await hop(policy, url, options, deadline);
  } finally {
    deadline.dispose();
  }
}

/**
 * undici is CommonJS: in an ESM bundle its dynamic import may arrive wrapped in `default`. Loaded once and kept:
 * an `import()` per probe makes the loader resolve the module again every time (ADR 0037).
 */
let undiciClient: Promise<typeof Client> | undefined;
function loadUndiciClient(): Promise<typeof Client> {
  undiciClient ??= import("undici").then((m) => {
    const mod = m as typeof import("undici") & { default?: typeof import("undici") };
    return mod.Client ?? (mod.default as typeof import("undici")).Client;
  });
  return undiciClient;
}

/** Secrets we were given for one origin are not sent to another (as browsers and undici do). */
function withoutSecrets(headers: Readonly<Record<string, string>> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).filter(([name]) => !isSecretHeader(name)));
}

/** Follow redirects by hand, each hop checked and pinned like the first; bounded by maxRedirects and one deadline. */
export async function httpProbe(
  policy: OutboundPolicy,
  target: string | URL,
  options: HttpProbeOptions = {},
): Promise<HttpProbeResult> {
  let url = parseTarget(target);
  const follow = options.followRedirects ?? true;
  const maxRedirects = Math.min(Math.max(0, options.maxRedirects ?? DEFAULT_MAX_REDIRECTS), MAX_REDIRECTS);
  const deadline = startDeadline(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, options.signal);
  const started = performance.now();
  const hops: HopResponse[] = [];
  let hopOptions: HttpRequestOptions = options;
  const done = (extra: Partial<HttpProbeResult>): HttpProbeResult => ({
    hops,
    final: hops.at(-1) ?? null,
    finalUrl: url.href,
    failure: null,
    stopped: null,
    totalMs: spanMs(started),
    ...extra,
  });
  try {
    for (let i = 0; i <= maxRedirects; i++) {
      let result: HopResult;
      try {
        result = await hop(policy, url, hopOptions, deadline);
      } catch (err) {
        const denied = err instanceof DiagError && err.code === "E_FORBIDDEN";
        if (i > 0 && denied && options.deniedRedirect === "stop") {
          const stopped: ChainStop = { url: url.href, reason: "denied", detail: err.message };
          return done({ finalUrl: hops.at(-1)?.url ?? url.href, stopped });
        }
        throw err;
      }
      if (!result.ok) return done({ failure: result.failure });
      const res = result.response;
      hops.push(res);
      if (!follow || !isRedirectStatus(res.status) || res.location === null) return done({});
      if (res.redirectUrl === null) {
        return done({
          stopped: { url: res.location.slice(0, 200), reason: "bad_location", detail: "Location is not a URL" },
        });
      }
      const next = new URL(res.redirectUrl);
      if (next.protocol !== "http:" && next.protocol !== "https:") {
        return done({
          stopped: { url: next.href, reason: "bad_location", detail: `not followed: ${next.protocol} URL` },
        });
      }
      if (i === maxRedirects) {
        return done({
          stopped: { url: next.href, reason: "redirect_limit", detail: `stopped after ${maxRedirects} redirects` },
        });
      }
      if (next.origin !== url.origin) hopOptions = { ...hopOptions, headers: withoutSecrets(hopOptions.headers) };
      url = next;
    }
    // Unreachable: the loop returns on its last turn.
    return done({});
  } finally {
    deadline.dispose();
  }
}

/** `location` against `base`, or null when it is not a URL. */
function resolvedUrl(location: string, base: URL): string | null {
  try {
    return new URL(location, base).href;
  } catch {
    return null;
  }
}
