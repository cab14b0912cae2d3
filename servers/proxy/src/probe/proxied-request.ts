/**
 * One GET, straight to the target or through an HTTP(S) proxy, over sockets this module opens itself to
 * addresses the policy checked (undici's ProxyAgent ignores a custom connector, so it cannot be pinned).
 * Plain http goes to the proxy as an absolute-form GET (no CONNECT: many proxies refuse CONNECT to port 80);
 * https goes through CONNECT, then TLS with the target inside the tunnel. Each phase is timed, and a failure
 * names the phase it happened in. The target's own policy check is the caller's (it is judged before this runs).
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { isIP, type Socket, connect as tcpConnect } from "node:net";
import { type SecureContext, type TLSSocket, connect as tlsConnect } from "node:tls";
import {
  classifySocketError,
  type DiagnosisCode,
  hostPort,
  type OutboundPolicy,
  PROBE_USER_AGENT,
} from "@roadnerd/conventions";
import type { ProxyTarget } from "../env/proxy-value.ts";

export type RequestPhase = "dns" | "proxy_connect" | "proxy_tls" | "tunnel" | "connect" | "tls" | "first_byte" | "body";

export interface PhaseTiming {
  dns: number;
  /** TCP (and TLS, for an https proxy) to the proxy; 0 when direct. */
  proxy_connect: number;
  /** CONNECT answered; 0 for plain http or direct. */
  tunnel: number;
  /** TCP to the target, direct only. */
  connect: number;
  /** TLS with the target (through the tunnel when proxied). */
  tls: number;
  /** Request sent → response headers. */
  first_byte: number;
  total: number;
}

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
  timing: PhaseTiming;
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
  timing: PhaseTiming;
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

const DAY_MS = 86_400_000;

class PhaseError extends Error {
  constructor(
    readonly code: DiagnosisCode,
    readonly phase: RequestPhase,
    message: string,
    readonly extra: { proxyStatus?: number; proxyAuthenticate?: string } = {},
  ) {
    super(message);
  }
}

function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
}

function targetTls(socket: TLSSocket): TargetTls {
  const cert = socket.getPeerCertificate();
  const has = cert && Object.keys(cert).length > 0;
  const validTo = has ? Date.parse(cert.valid_to) : Number.NaN;
  const issuer = has ? (cert.issuer?.O ?? cert.issuer?.CN) : undefined;
  const authError = socket.authorizationError as unknown;
  return {
    authorized: socket.authorized,
    authorization_error: socket.authorized || authError == null ? null : String(authError).slice(0, 80),
    protocol: socket.getProtocol() ?? null,
    cert_expiry_days: Number.isNaN(validTo) ? null : Math.trunc((validTo - Date.now()) / DAY_MS),
    issuer: typeof issuer === "string" ? issuer.slice(0, 120) : null,
  };
}

/** Resolve with the policy and connect to the checked addresses in turn (the next one after a refusal). */
async function dial(
  policy: OutboundPolicy,
  host: string,
  port: number,
  signal: AbortSignal,
  phase: RequestPhase,
  mark: { dnsMs: number },
  track: (s: Socket) => void,
): Promise<Socket> {
  let addresses: string[];
  try {
    const resolved = await policy.resolveTarget(host, signal, port);
    addresses = resolved.addresses;
    mark.dnsMs += resolved.dnsMs;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "E_DNS_FAIL") throw new PhaseError("E_DNS_FAIL", "dns", (err as Error).message);
    if (code === "E_TIMEOUT") throw new PhaseError("E_TIMEOUT", "dns", (err as Error).message);
    throw err;
  }
  let last: PhaseError | undefined;
  for (const address of addresses) {
    // Checked again just before the dial: what we connect to is exactly what the policy saw.
    policy.checkAddress(address, isIP(host) ? undefined : host, port);
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const s = tcpConnect({ host: address, port });
        track(s);
        s.setNoDelay(true);
        s.once("connect", () => resolve(s));
        s.once("error", (e: NodeJS.ErrnoException) => {
          const f = classifySocketError(e.code, true);
          reject(
            new PhaseError(f.code, phase, `${f.reason} (${e.code ?? "error"}, address ${hostPort(address, port)})`),
          );
        });
      });
    } catch (err) {
      last = err as PhaseError;
      if (last.code !== "E_CONN_REFUSED" && last.code !== "E_UNREACHABLE") throw last;
    }
  }
  throw last ?? new PhaseError("E_DNS_FAIL", "dns", `${host} has no addresses`);
}

function startTls(
  socket: Socket,
  servername: string,
  secureContext: SecureContext | undefined,
  phase: RequestPhase,
  track: (s: Socket) => void,
): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const t = tlsConnect({
      socket,
      ...(isIP(servername) ? {} : { servername }),
      ...(secureContext ? { secureContext } : {}),
      ALPNProtocols: ["http/1.1"],
      // Reported, not refused: `authorized` says what a browser would do.
      rejectUnauthorized: false,
    });
    track(t);
    t.once("secureConnect", () => resolve(t));
    t.once("error", (e: NodeJS.ErrnoException) =>
      reject(new PhaseError("E_TLS", phase, `TLS handshake failed with ${servername}: ${e.code ?? e.message}`)),
    );
  });
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
  phase: RequestPhase,
): Promise<{ res: IncomingMessage; tunnel: Socket | null }> {
  return new Promise((resolve, reject) => {
    // No agent: with createConnection and no agent, Node sends the request over exactly this socket.
    const req = httpRequest({ ...options, createConnection: () => socket });
    req.once("connect", (res: IncomingMessage, tunnel: Socket, head: Buffer) => {
      if (head.length > 0) tunnel.unshift(head);
      resolve({ res, tunnel });
    });
    req.once("response", (res: IncomingMessage) => resolve({ res, tunnel: null }));
    req.once("error", (e: NodeJS.ErrnoException) => {
      const f = classifySocketError(e.code, false);
      const what = e.code?.startsWith("HPE_") ? "not an HTTP response" : f.reason;
      reject(new PhaseError(f.code, phase, `${what} (${e.code ?? e.message})`));
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

function proxyRefusal(res: IncomingMessage, phase: RequestPhase, what: string): PhaseError {
  const status = res.statusCode ?? 0;
  const challenge = res.headers["proxy-authenticate"];
  const scheme = (Array.isArray(challenge) ? challenge.join(", ") : challenge)?.slice(0, 120);
  const why =
    status === 407
      ? `the proxy wants credentials (${scheme ?? "no Proxy-Authenticate"})`
      : `the proxy refused ${what} with ${status} ${res.statusMessage ?? ""}`.trim();
  res.resume();
  return new PhaseError("E_CONN_REFUSED", phase, why, {
    proxyStatus: status,
    ...(scheme ? { proxyAuthenticate: scheme } : {}),
  });
}

/** The request; target failures come back as `ok: false` with their phase, policy refusals are thrown. */
export async function proxiedRequest(options: ProxiedRequestOptions): Promise<RequestResult> {
  const { target, proxy, policy } = options;
  const started = performance.now();
  const sockets: Socket[] = [];
  const track = (s: Socket) => sockets.push(s);
  const marks = { dnsMs: 0 };
  const timing: PhaseTiming = { dns: 0, proxy_connect: 0, tunnel: 0, connect: 0, tls: 0, first_byte: 0, total: 0 };
  const since = (t: number) => Math.round((performance.now() - t) * 10) / 10;
  let phase: RequestPhase = "dns";
  let tls: TargetTls | null = null;

  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), options.timeoutMs);
  const onOuter = () => deadline.abort();
  options.signal.addEventListener("abort", onOuter, { once: true });
  const aborted = new Promise<never>((_, reject) => {
    deadline.signal.addEventListener(
      "abort",
      () => reject(new PhaseError("E_TIMEOUT", phase, `no answer in time (${phase}, timeout ${options.timeoutMs} ms)`)),
      { once: true },
    );
  });
  aborted.catch(() => {});
  const step = <T>(p: Promise<T>) => Promise.race([p, aborted]);

  const host = target.hostname.replace(/^\[|\]$/g, "");
  const port = portOf(target);
  const https = target.protocol === "https:";
  const path = `${target.pathname}${target.search}`;
  const common = { "user-agent": PROBE_USER_AGENT, accept: options.accept ?? "*/*", connection: "close" };
  try {
    let res: IncomingMessage;
    if (proxy) {
      phase = "proxy_connect";
      let t = performance.now();
      let socket: Socket = await step(dial(policy, proxy.host, proxy.port, deadline.signal, phase, marks, track));
      if (proxy.scheme === "https") {
        phase = "proxy_tls";
        socket = await step(startTls(socket, proxy.host, options.secureContext, phase, track));
      }
      timing.dns = marks.dnsMs;
      timing.proxy_connect = Math.max(0, since(t) - marks.dnsMs);
      if (https) {
        phase = "tunnel";
        t = performance.now();
        const authority = hostPort(host, port);
        const answer = await step(
          exchange(
            socket,
            { method: "CONNECT", path: authority, headers: { host: authority, ...basicAuth(proxy) } },
            phase,
          ),
        );
        timing.tunnel = since(t);
        if (answer.res.statusCode !== 200 || !answer.tunnel)
          throw proxyRefusal(answer.res, phase, `CONNECT ${authority}`);
        phase = "tls";
        t = performance.now();
        const secure = await step(startTls(answer.tunnel, host, options.secureContext, phase, track));
        tls = targetTls(secure);
        timing.tls = since(t);
        phase = "first_byte";
        t = performance.now();
        res = (await step(exchange(secure, { method: "GET", path, headers: { host: target.host, ...common } }, phase)))
          .res;
        timing.first_byte = since(t);
      } else {
        phase = "first_byte";
        t = performance.now();
        // Absolute-form request to the proxy: the URL without credentials or fragment.
        const absolute = `${target.protocol}//${target.host}${path}`;
        const headers = { host: target.host, ...common, ...basicAuth(proxy) };
        res = (await step(exchange(socket, { method: "GET", path: absolute, headers }, phase))).res;
        timing.first_byte = since(t);
        if (res.statusCode === 407) throw proxyRefusal(res, phase, "the request");
      }
    } else {
      phase = "connect";
      let t = performance.now();
      let socket: Socket = await step(dial(policy, host, port, deadline.signal, phase, marks, track));
      timing.dns = marks.dnsMs;
      timing.connect = Math.max(0, since(t) - marks.dnsMs);
      if (https) {
        phase = "tls";
        t = performance.now();
        const secure = await step(startTls(socket, host, options.secureContext, phase, track));
        tls = targetTls(secure);
        timing.tls = since(t);
        socket = secure;
      }
      phase = "first_byte";
      t = performance.now();
      res = (await step(exchange(socket, { method: "GET", path, headers: { host: target.host, ...common } }, phase)))
        .res;
      timing.first_byte = since(t);
    }
    phase = "body";
    const body = await step(readBody(res, options.maxBodyBytes ?? 0));
    timing.total = since(started);
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
    if (!(err instanceof PhaseError)) throw err;
    timing.dns = timing.dns || marks.dnsMs;
    timing.total = since(started);
    return { ok: false, code: err.code, phase: err.phase, detail: err.message, ...err.extra, timing, tls };
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", onOuter);
    for (const s of sockets) s.destroy();
  }
}
