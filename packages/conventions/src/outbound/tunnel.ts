/**
 * HTTP CONNECT over a socket already open to a proxy, and the words for a proxy that says no. Used by the dial
 * (https through a proxy) and by a tool that sends a plain-http request to a proxy itself (a 407 there too).
 */
import { type IncomingMessage, request } from "node:http";
import type { Socket } from "node:net";
import { HOP_HEADERS } from "./hop.ts";

export interface ProxyRefusal {
  status: number;
  /** Proxy-Authenticate: the scheme the proxy wants (no credential in it). */
  authenticate: string | undefined;
  message: string;
}

/** A proxy's non-2xx answer in words; the answer's body is drained. `what`: what it refused ("CONNECT a:443"). */
export function proxyRefusal(res: IncomingMessage, what: string): ProxyRefusal {
  const status = res.statusCode ?? 0;
  const challenge = res.headers["proxy-authenticate"];
  const authenticate = (Array.isArray(challenge) ? challenge.join(", ") : challenge)?.slice(0, 120);
  const message =
    status === 407
      ? `the proxy wants credentials (${authenticate ?? "no Proxy-Authenticate"})`
      : `the proxy refused ${what} with ${status} ${res.statusMessage ?? ""}`.trim();
  res.resume();
  return { status, authenticate, message };
}

export type TunnelAnswer = { ok: true; socket: Socket } | { ok: false; refusal: ProxyRefusal };

/**
 * Ask the proxy on `socket` for a tunnel to `authority` (host:port). Rejects with the socket's or the parser's
 * error (its `code` kept); a refusal is an answer, not an error.
 */
export function openTunnel(
  socket: Socket,
  authority: string,
  headers: Readonly<Record<string, string>>,
): { answer: Promise<TunnelAnswer>; cancel(): void } {
  // No agent: with createConnection and no agent, Node sends the request over exactly this socket.
  const req = request({
    method: "CONNECT",
    path: authority,
    // A sibling server taken for a proxy must know a tool sent this (ADR 0047).
    headers: { host: authority, ...headers, ...HOP_HEADERS },
    createConnection: () => socket,
  });
  const answer = new Promise<TunnelAnswer>((resolve, reject) => {
    req.once("connect", (res: IncomingMessage, tunnel: Socket, head: Buffer) => {
      if (res.statusCode !== 200) return resolve({ ok: false, refusal: proxyRefusal(res, `CONNECT ${authority}`) });
      if (head.length > 0) tunnel.unshift(head);
      resolve({ ok: true, socket: tunnel });
    });
    req.once("response", (res: IncomingMessage) =>
      resolve({ ok: false, refusal: proxyRefusal(res, `CONNECT ${authority}`) }),
    );
    req.once("error", reject);
  });
  req.end();
  return { answer, cancel: () => req.destroy() };
}
