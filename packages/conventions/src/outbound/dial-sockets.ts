/**
 * The two socket steps the dial is made of: one TCP connection to one checked address, and one TLS handshake over
 * a socket already open. Neither decides anything: the dial has checked the address and names the certificate's
 * host.
 */
import { type Socket, connect as tcpConnect } from "node:net";
import { type SecureContext, type TLSSocket, connect as tlsConnect } from "node:tls";
import { ipFamily } from "../define/fields.ts";
import { classifySocketError } from "../errors/socket-errors.ts";
import type { DialAttempt } from "./dial-error.ts";
import { spanMs } from "./timing.ts";

export interface DialTls {
  /** ALPN protocols to offer, in order (default ["http/1.1"]). */
  alpn?: readonly string[] | undefined;
  /** Trusted CAs; undefined: Node's defaults (NODE_EXTRA_CA_CERTS included). */
  secureContext?: SecureContext | undefined;
  /**
   * Default true: `authorized` covers the chain and the name, as a browser judges. false: the chain alone, so a
   * chain error does not hide a name error (the name is always reported apart, `hostnameOk` / `nameError`).
   */
  nameInVerdict?: boolean | undefined;
}

/** After the dial, errors are the reader's; this one only keeps a late error on an unwatched socket from ending the process. */
export const ignore = () => {};

export interface Attempt {
  record: DialAttempt;
  socket?: Socket;
  error?: Error;
}

/** One TCP connection to one checked address; never rejects. The socket is destroyed unless it connected. */
export function connectOnce(
  address: string,
  port: number,
  signal: AbortSignal,
  limitMs: number | undefined,
): Promise<Attempt> {
  return new Promise((resolve) => {
    const started = performance.now();
    const record = (extra: Partial<DialAttempt>): DialAttempt => ({
      address,
      ms: spanMs(started),
      ...(limitMs === undefined ? {} : { limitMs }),
      ...extra,
    });
    if (signal.aborted)
      return resolve({ record: record({ gaveUp: true, failure: classifySocketError("ETIMEDOUT", true) }) });
    const socket = tcpConnect({ host: address, port });
    socket.setNoDelay(true);
    let timer: NodeJS.Timeout | undefined;
    const done = (result: Attempt) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", giveUp);
      socket.removeListener("connect", onConnect);
      socket.removeListener("error", onError);
      if (!result.socket) socket.on("error", ignore).destroy();
      resolve(result);
    };
    const giveUp = () => done({ record: record({ gaveUp: true, failure: classifySocketError("ETIMEDOUT", true) }) });
    const onConnect = () => done({ record: record({}), socket });
    const onError = (err: NodeJS.ErrnoException) =>
      done({ record: record({ failure: classifySocketError(err.code, true) }), error: err });
    socket.once("connect", onConnect);
    socket.once("error", onError);
    signal.addEventListener("abort", giveUp, { once: true });
    if (limitMs !== undefined) timer = setTimeout(giveUp, limitMs);
  });
}

/** The handshake on an open socket. `name` is what the certificate must carry; SNI only when it is a name. */
export function handshake(socket: Socket, name: string, tls: DialTls, signal: AbortSignal): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const secured = tlsConnect({
      socket,
      // Not dialled (the socket is open): the name the identity check uses.
      host: name,
      // SNI must be a name (RFC 6066): never an IP literal.
      ...(ipFamily(name) ? {} : { servername: name }),
      ALPNProtocols: [...(tls.alpn ?? ["http/1.1"])],
      // Reported, not refused: `authorized` says what a browser would do.
      rejectUnauthorized: false,
      // The chain alone: the name is judged apart (tlsFacts), so each has its own answer.
      ...(tls.nameInVerdict === false ? { checkServerIdentity: () => undefined } : {}),
      ...(tls.secureContext ? { secureContext: tls.secureContext } : {}),
    });
    const done = (err: Error | null) => {
      signal.removeEventListener("abort", onAbort);
      secured.removeListener("secureConnect", onSecure);
      secured.removeListener("error", onError);
      if (err) {
        secured.on("error", ignore).destroy();
        reject(err);
      } else {
        // Closing the secure socket closes the connection under it.
        secured.once("close", () => socket.destroy());
        resolve(secured);
      }
    };
    const onSecure = () => done(null);
    const onError = (err: Error) => done(err);
    const onAbort = () => done(Object.assign(new Error("aborted during the TLS handshake"), { code: "ECONNABORTED" }));
    secured.once("secureConnect", onSecure);
    secured.once("error", onError);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
