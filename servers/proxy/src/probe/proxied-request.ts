/**
 * One GET, straight to the target or through an HTTP(S) proxy, over a connection the kernel's dial opens to
 * addresses the policy checked (undici's ProxyAgent ignores a custom connector, so it cannot be pinned). Plain
 * http goes to the proxy as an absolute-form GET (no CONNECT: many proxies refuse CONNECT to port 80); https goes
 * through CONNECT, then TLS with the target inside the tunnel. Each phase is timed, and a failure names the phase
 * it happened in. The target's own policy check is the caller's (it is judged before this runs).
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { SecureContext } from "node:tls";
import {
  classifySocketError,
  type DiagnosisCode,
  DialError,
  type DialPhase,
  dial,
  HOP_HEADERS,
  type OutboundPolicy,
  type PhaseTiming,
  PROBE_USER_AGENT,
  portOf,
  proxyRefusal,
  spanMs,
  type TlsFacts,
} from "@roadnerd/conventions";
import type { ProxyTarget } from "../env/proxy-value.ts";

/** The dial's phases, then the request's: response headers (ttfb) and the body. */
export type RequestPhase = DialPhase | "ttfb" | "body";

export const REQUEST_PHASES = [
  "dns",
  "proxy_connect",
  "proxy_tls",
  "tunnel",
  "connect",
  "tls",
  "ttfb",
  "body",
] as const satisfies readonly RequestPhase[];

/** The kernel's timing shape with every phase present (0 when not taken: direct has no proxy_connect, no tunnel). */
export type ProxiedTiming = Required<PhaseTiming>;

export interface TargetTls {
  authorized: boolean;
  authorization_error: string | null;
  protocol: string | null;
  cert_expiry_days: number | null;
  issuer: string | null;
}

export interface RequestOk {
  ok: true;
  status: number;
  headers: Record<string, string>;
  body: string;
  bodyComplete: boolean;
  timing: ProxiedTiming;
  tls: TargetTls | null;
}

export interface RequestFailed {
  ok: false;
  code: DiagnosisCode;
  phase: RequestPhase;
  detail: string;
  /** The proxy's answer to CONNECT (or to a plain request it refused itself, 407). */
  proxyStatus?: number;
  /** Proxy-Authenticate: the scheme the proxy wants (no credential in it). */
  proxyAuthenticate?: string;
  timing: ProxiedTiming;
  tls: TargetTls | null;
}

export type RequestResult = RequestOk | RequestFailed;

export interface ProxiedRequestOptions {
  target: URL;
  proxy: ProxyTarget | null;
  policy: OutboundPolicy;
  signal: AbortSignal;
  timeoutMs: number;
  /** Trusted CAs for TLS (target and https proxy); undefined: Node's defaults (NODE_EXTRA_CA_CERTS included). */
  secureContext?: SecureContext | undefined;
  /** Body bytes to keep (0: none, the connection is closed after the headers). */
  maxBodyBytes?: number;
  accept?: string;
}

/** A failure of the request itself, after the dial. */
class PhaseError extends Error {
  override readonly name = "PhaseError";
  constructor(
    readonly code: DiagnosisCode,
    readonly phase: RequestPhase,
    message: string,
    readonly extra: { proxyStatus?: number; proxyAuthenticate?: string } = {},
  ) {
    super(message);
  }
}

function targetTls(facts: TlsFacts): TargetTls {
  return {
    authorized: facts.authorized,
    authorization_error: facts.authorizationError,
    protocol: facts.protocol,
    cert_expiry_days: facts.certExpiryDays,
    issuer: facts.issuer,
  };
}

function basicAuth(proxy: ProxyTarget): Record<string, string> {
  if (!proxy.credentials) return {};
  const token = Buffer.from(`${proxy.username}:${proxy.password}`).toString("base64");
  return { "proxy-authorization": `Basic ${token}` };
}

function flatHeaders(res: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/** Send one request over an open socket and wait for the response headers. */
function exchange(
  socket: Socket,
  options: { method: string; path: string; headers: Record<string, string> },
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    // No agent: with createConnection and no agent, Node sends the request over exactly this socket.
    const req = httpRequest({ ...options, createConnection: () => socket });
    req.once("response", resolve);
    req.once("error", (e: NodeJS.ErrnoException) => {
      const f = classifySocketError(e.code, false);
      const what = e.code?.startsWith("HPE_") ? "not an HTTP response" : f.reason;
      reject(new PhaseError(f.code, "ttfb", `${what} (${e.code ?? e.message})`));
    });
    req.end();
  });
}

async function readBody(res: IncomingMessage, max: number): Promise<{ text: string; complete: boolean }> {
  if (max <= 0) {
    res.destroy();
    return { text: "", complete: false };
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of res) {
      const buf = chunk as Buffer;
      if (bytes + buf.length > max) {
        chunks.push(buf.subarray(0, max - bytes));
        res.destroy();
        return { text: Buffer.concat(chunks).toString("utf8"), complete: false };
      }
      chunks.push(buf);
      bytes += buf.length;
    }
  } catch {
    return { text: Buffer.concat(chunks).toString("utf8"), complete: false };
  }
  return { text: Buffer.concat(chunks).toString("utf8"), complete: true };
}

/** The connection's phases as this tool reports them: every one present, 0 when not taken. */
function dialTiming(t: PhaseTiming): Omit<ProxiedTiming, "ttfb" | "total"> {
  return { dns: t.dns, proxy_connect: t.proxy_connect ?? 0, tunnel: t.tunnel ?? 0, connect: t.connect, tls: t.tls };
}

/** The request; target failures come back as `ok: false` with their phase, policy refusals are thrown. */
export async function proxiedRequest(options: ProxiedRequestOptions): Promise<RequestResult> {
  const { target, proxy, policy } = options;
  const started = performance.now();
  let timing: ProxiedTiming = { dns: 0, proxy_connect: 0, tunnel: 0, connect: 0, tls: 0, ttfb: 0, total: 0 };
  let phase: RequestPhase = "dns";
  let tls: TargetTls | null = null;
  let socket: Socket | undefined;

  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), options.timeoutMs);
  const onOuter = () => deadline.abort();
  options.signal.addEventListener("abort", onOuter, { once: true });
  const late = () => `no answer in time (${phase}, timeout ${options.timeoutMs} ms)`;
  const aborted = new Promise<never>((_, reject) => {
    deadline.signal.addEventListener("abort", () => reject(new PhaseError("E_TIMEOUT", phase, late())), {
      once: true,
    });
  });
  aborted.catch(() => {});
  const step = <T>(p: Promise<T>) => Promise.race([p, aborted]);

  const host = target.hostname.replace(/^\[|\]$/g, "");
  const port = portOf(target);
  const https = target.protocol === "https:";
  const path = `${target.pathname}${target.search}`;
  // HOP_HEADERS: a RoadNerd server, as target or taken for a proxy, refuses a tool's request (ADR 0047).
  const common = {
    "user-agent": PROBE_USER_AGENT,
    accept: options.accept ?? "*/*",
    connection: "close",
    ...HOP_HEADERS,
  };
  const trust = { alpn: ["http/1.1"], secureContext: options.secureContext };
  try {
    // Direct: the target, resolved and pinned. Through a proxy: the proxy, resolved and pinned; https tunnels
    // through CONNECT with TLS to the target inside, plain http stops at the proxy for an absolute-form GET.
    const dialed = await dial(policy, {
      host,
      port,
      signal: deadline.signal,
      ...(https ? { tls: trust } : {}),
      ...(proxy
        ? {
            proxy: {
              host: proxy.host,
              port: proxy.port,
              ...(proxy.scheme === "https" ? { tls: trust } : {}),
              headers: basicAuth(proxy),
              tunnel: https,
            },
          }
        : {}),
    });
    socket = dialed.socket;
    timing = { ...timing, ...dialTiming(dialed.timing) };
    tls = dialed.tls ? targetTls(dialed.tls) : null;

    phase = "ttfb";
    const t = performance.now();
    let res: IncomingMessage;
    if (proxy && !https) {
      // Absolute-form request to the proxy: the URL without credentials or fragment.
      const absolute = `${target.protocol}//${target.host}${path}`;
      const headers = { host: target.host, ...common, ...basicAuth(proxy) };
      res = await step(exchange(socket, { method: "GET", path: absolute, headers }));
      timing.ttfb = spanMs(t);
      if (res.statusCode === 407) {
        const r = proxyRefusal(res, "the request");
        throw new PhaseError("E_CONN_REFUSED", phase, r.message, {
          proxyStatus: r.status,
          ...(r.authenticate ? { proxyAuthenticate: r.authenticate } : {}),
        });
      }
    } else {
      res = await step(exchange(socket, { method: "GET", path, headers: { host: target.host, ...common } }));
      timing.ttfb = spanMs(t);
    }
    phase = "body";
    const body = await step(readBody(res, options.maxBodyBytes ?? 0));
    timing.total = spanMs(started);
    return {
      ok: true,
      status: res.statusCode ?? 0,
      headers: flatHeaders(res),
      body: body.text,
      bodyComplete: body.complete,
      timing,
      tls,
    };
  } catch (err) {
    timing.total = spanMs(started);
    if (err instanceof DialError) {
      timing = { ...timing, ...dialTiming(err.timing) };
      phase = err.phase;
      const detail = err.code === "E_TIMEOUT" && deadline.signal.aborted ? late() : err.message;
      return {
        ok: false,
        code: err.code,
        phase,
        detail,
        ...(err.proxyStatus !== undefined ? { proxyStatus: err.proxyStatus } : {}),
        ...(err.proxyAuthenticate ? { proxyAuthenticate: err.proxyAuthenticate } : {}),
        timing,
        tls,
      };
    }
    if (!(err instanceof PhaseError)) throw err;
    return { ok: false, code: err.code, phase: err.phase, detail: err.message, ...err.extra, timing, tls };
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", onOuter);
    socket?.destroy();
  }
}
