/**
 * The gateway's answers to requests whose body it does not read (ADR 0055). Node's HTTP server, answering a
 * request on a kept-alive connection before its body was read, reads and drops the whole body to reach the next
 * request: `POST /nope` with 100 MB was read in full before its 404, and a uid the gateway refuses pushed
 * 1.97 GB into a 403 (sealed attacker review). As the servers do (kernel error replies, ADR 0048), an answer
 * given while the body is unread, and every refusal, closes the connection (`Connection: close`, then Node
 * ends and destroys the socket): the body is never read past what is already in flight.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/** Refusals: the caller keeps no connection (a refused uid's kept-alive sockets were the lever). */
const REFUSALS = new Set([401, 403, 404, 405, 413]);

/** Whether the request announces a body (a Content-Length above 0, or any Transfer-Encoding): from its headers. */
function announcesBody(req: IncomingMessage): boolean {
  return req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
}

/** The routes that read a body (POST /mcp, the page's /api/call/<server>/<tool> and /api/triage). */
const READS_BODY = /^\/(mcp|api\/call\/.+|api\/triage)$/;

/** Whether this request's body is unread still: announced by its headers and not all received yet. */
const unread = (req: IncomingMessage) => announcesBody(req) && !req.complete;

/**
 * On arrival: a request with a body on a route that never reads one closes its connection, whatever it is
 * answered (a 404, a 403 for the uid, /healthz's 200, the page's files, a stream).
 */
export function closeIfNeverRead(req: IncomingMessage, res: ServerResponse, path: string): void {
  if (!(req.method === "POST" && READS_BODY.test(path)) && unread(req)) res.setHeader("connection", "close");
}

/**
 * When answering: a refusal (401, 403, 404, 405, 413) closes its connection, body or not, and so does any answer
 * given while the body is still unread (a route that reads it answers after the read, and keeps the connection).
 */
export function closeIfRefused(res: ServerResponse, status: number): void {
  if (res.headersSent) return;
  if (REFUSALS.has(status) || unread(res.req)) res.setHeader("connection", "close");
}
