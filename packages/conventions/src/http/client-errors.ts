/**
 * Requests Node's HTTP parser refuses before any route runs (Content-Length with Transfer-Encoding, a request
 * line or headers over 16 KiB, a body or headers that never complete) still get our typed error body, and
 * the connection is destroyed: not just ended. An ended socket whose peer never closes its side stays in
 * FIN-WAIT-2 holding a descriptor and a slot of the connection cap for as long as the peer likes (770 idle
 * peers kept /healthz unreachable); the answer gets a short moment to leave, then the socket is gone.
 */
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import { DiagError, errorBody } from "../errors/errors.ts";

/** How long a refused request's answer may take to leave before its socket is destroyed anyway. */
export const REFUSAL_FLUSH_MS = 500;

function diagnose(err: NodeJS.ErrnoException): { status: number; error: DiagError } {
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return { status: 408, error: new DiagError("E_TIMEOUT", "request not received in time (headers or body stalled)") };
  }
  if (err.code === "HPE_HEADER_OVERFLOW") {
    return { status: 431, error: new DiagError("E_INVALID_INPUT", "request line or headers larger than 16 KiB") };
  }
  // llhttp says what it refused ("Transfer-Encoding can't be present with Content-Length"): a clean reason.
  const reason = /^Parse Error: (.{1,120})/.exec(err.message ?? "")?.[1] ?? "malformed HTTP";
  return { status: 400, error: new DiagError("E_INVALID_INPUT", `bad request: ${reason}`) };
}

/** End with `data`, then destroy: once written, or after REFUSAL_FLUSH_MS if the peer does not read. */
export function endAndDestroy(socket: Socket, data = ""): void {
  const timer = setTimeout(() => socket.destroy(), REFUSAL_FLUSH_MS);
  timer.unref();
  socket.once("close", () => clearTimeout(timer));
  socket.end(data, () => socket.destroy());
}

export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === "ECONNRESET" || socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const { status, error } = diagnose(err);
  const body = JSON.stringify(errorBody(error));
  endAndDestroy(
    socket,
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
