/**
 * The browser's only way out: a tiny HTTP/CONNECT proxy on 127.0.0.1 that puts every request the page makes
 * through the kernel's outbound policy — the first navigation, every redirect hop, every subresource, every
 * WebSocket (Chromium tunnels ws:// and wss:// through CONNECT) and every IP-literal URL alike — and connects
 * only to the address the policy checked. Measured here: Playwright's route() filtering leaked through a 302
 * and a WebSocket; a proxy sees them all. A refused target gets a 403 marked `x-webcheck-blocked` and is
 * recorded, so the snapshot can say what the page tried to reach. A name OUTBOUND_ALLOW does not name is
 * refused before any lookup, whatever CIDRs it holds: a page's lookups are a way out of their own.
 */
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import { type AddressInfo, isIP, type Socket } from "node:net";
import {
  DiagError,
  type DiagnosisCode,
  DialError,
  dial,
  HOP_HEADERS,
  hostPort,
  maskUrl,
  type OutboundPolicy,
  portOf,
} from "@roadnerd/conventions";

export const BLOCKED_HEADER = "x-webcheck-blocked";
export const FAILED_HEADER = "x-webcheck-error";
const MAX_RECORDED = 50;
const CONNECT_TIMEOUT_MS = 5_000;
/** Hop-by-hop headers (RFC 9110 §7.6.1) and the proxy's own: never forwarded. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

export interface Refusal {
  /** host:port (or the URL, secrets masked) the page tried to reach. */
  target: string;
  reason: string;
}

export interface UpstreamFailure {
  target: string;
  code: DiagnosisCode;
  detail: string;
}

export interface FilterProxy {
  /** http://127.0.0.1:<port>, for Chromium's proxy setting. */
  url: string;
  /** Targets the policy refused, in order (at most 50 kept; `refusedCount` counts them all). */
  refusals: Refusal[];
  refusedCount(): number;
  /** Allowed targets that could not be reached. */
  failures: UpstreamFailure[];
  close(): Promise<void>;
}

/** `null`: refuse everything (the browser-wide fallback, for traffic outside any snapshot's context). */
export type ProxyPolicy = OutboundPolicy | null;

/** Resolve, check and connect through the kernel's dial (the next address only when one refuses or has no route). */
async function connectChecked(policy: ProxyPolicy, host: string, port: number, signal: AbortSignal): Promise<Socket> {
  if (!policy) throw new DiagError("E_FORBIDDEN", "no snapshot is running: the browser may reach nothing");
  // A page picks the names it loads, and a lookup alone carries data to whoever serves the zone (with a CIDR in
  // OUTBOUND_ALLOW the kernel would look a name up to see where it lands). Only names OUTBOUND_ALLOW names are
  // ever looked up here; any other name is refused first.
  if (isIP(host) === 0 && !policy.allowsName(host)) {
    throw new DiagError("E_FORBIDDEN", `target not in OUTBOUND_ALLOW (a page's names are not looked up): ${host}`, {
      hint: "name the host in OUTBOUND_ALLOW, or use its address",
    });
  }
  return (await dial(policy, { host, port, signal, timeoutMs: CONNECT_TIMEOUT_MS })).socket;
}

function blockedPage(target: string, reason: string): string {
  const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html><title>blocked by webcheck</title><h1>Blocked by webcheck</h1><p>${esc(target)}</p><p>${esc(reason)}</p>`;
}

export async function startFilterProxy(policy: ProxyPolicy, signal: AbortSignal): Promise<FilterProxy> {
  const refusals: Refusal[] = [];
  const failures: UpstreamFailure[] = [];
  let refused = 0;
  const sockets = new Set<Socket>();
  const life = new AbortController();
  const onOuter = () => life.abort();
  signal.addEventListener("abort", onOuter, { once: true });

  const refuse = (target: string, err: unknown): Refusal | undefined => {
    if (!(err instanceof DiagError) || (err.code !== "E_FORBIDDEN" && err.code !== "E_INVALID_INPUT")) return undefined;
    refused += 1;
    const r = { target, reason: err.message };
    if (refusals.length < MAX_RECORDED) refusals.push(r);
    return r;
  };
  const fail = (target: string, err: unknown): UpstreamFailure => {
    // The dial's diagnosis; anything else (a bug) still answers the browser rather than ending the process.
    const code: DiagnosisCode = err instanceof DialError ? err.code : "E_CONN_REFUSED";
    const f = { target, code, detail: (err instanceof Error ? err.message : String(err)).slice(0, 160) };
    if (failures.length < MAX_RECORDED) failures.push(f);
    return f;
  };

  /** Plain http:// in absolute form: checked, then forwarded over a connection to the checked address. */
  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
      if (url.protocol !== "http:") throw new Error("not http");
    } catch {
      res.writeHead(400, { connection: "close" }).end();
      return;
    }
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const port = portOf(url);
    const shown = maskUrl(url.href);
    let upstream: Socket;
    try {
      upstream = await connectChecked(policy, host, port, life.signal);
    } catch (err) {
      const r = refuse(shown, err);
      if (r) {
        res.writeHead(403, { "content-type": "text/html", [BLOCKED_HEADER]: "1", connection: "close" });
        res.end(blockedPage(r.target, r.reason));
        return;
      }
      const f = fail(hostPort(host, port), err);
      res.writeHead(502, { "content-type": "text/plain", [FAILED_HEADER]: f.code, connection: "close" });
      res.end(`${f.code}: ${f.detail}\n`);
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    }
    // The page's request is a tool's: a RoadNerd server it reaches refuses it (ADR 0047). https goes through
    // CONNECT, whose tunnel we cannot mark inside; the dial's CONNECT to a proxy carries it.
    Object.assign(headers, HOP_HEADERS);
    const out = request({
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
      // No agent: with createConnection alone, Node uses exactly this socket (agent: false would dial anew).
      createConnection: () => upstream,
    });
    out.on("response", (answer) => {
      const back: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name)) back[name] = value;
      }
      res.writeHead(answer.statusCode ?? 502, back);
      answer.pipe(res);
    });
    out.on("error", () => res.destroy());
    res.on("close", () => out.destroy());
    req.pipe(out);
  }

  /** CONNECT host:port (https, ws, wss): checked, then a blind tunnel to the checked address. */
  async function onConnect(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    client.on("error", () => client.destroy());
    let host: string;
    let port: number;
    try {
      const u = new URL(`http://${req.url ?? ""}`);
      host = u.hostname.replace(/^\[|\]$/g, "");
      port = Number(u.port || 443);
    } catch {
      client.end("HTTP/1.1 400 Bad Request\r\n\r\n");
      return;
    }
    const where = hostPort(host, port);
    let upstream: Socket;
    try {
      upstream = await connectChecked(policy, host, port, life.signal);
    } catch (err) {
      const r = refuse(where, err);
      if (r) client.end(`HTTP/1.1 403 Forbidden\r\n${BLOCKED_HEADER}: 1\r\n\r\n`);
      else client.end(`HTTP/1.1 502 Bad Gateway\r\n${FAILED_HEADER}: ${fail(where, err).code}\r\n\r\n`);
      return;
    }
    sockets.add(upstream);
    upstream.once("close", () => sockets.delete(upstream));
    upstream.on("error", () => client.destroy());
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  }

  const server = createServer((req, res) => void onRequest(req, res));
  server.on("connect", (req, socket, head) => void onConnect(req, socket as Socket, head));
  // Absolute-form upgrades are not how Chromium proxies WebSockets (it uses CONNECT): refuse them outright.
  server.on("upgrade", (req, socket) => {
    refuse(req.url ?? "?", new DiagError("E_FORBIDDEN", "upgrade requests are not proxied"));
    socket.end(`HTTP/1.1 403 Forbidden\r\n${BLOCKED_HEADER}: 1\r\n\r\n`);
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  server.on("clientError", (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    refusals,
    refusedCount: () => refused,
    failures,
    close() {
      signal.removeEventListener("abort", onOuter);
      life.abort();
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
