/**
 * The socket side of an HTTP probe: undici calls this instead of its own connector, so no lookup (and no
 * IP-literal shortcut around one) can happen inside undici. It is the kernel's dial, once per hop: resolve with
 * the policy, connect to exactly the checked address, time the phases, read the TLS facts.
 */
import type { Socket } from "node:net";
import type { buildConnector } from "undici";
import { type Dialed, dial } from "./dial.ts";
import { DialError } from "./dial-error.ts";
import type { OutboundPolicy } from "./policy.ts";

export interface DialTarget {
  /** Host as written in the URL (no brackets): SNI and the certificate's name check use it. */
  host: string;
  port: number;
  tls: boolean;
  /** Offer h2 by ALPN (undici speaks it when the server picks it). */
  offerH2: boolean;
}

export interface DialConnection {
  connector: buildConnector.connector;
  /** The dial's answer once connected: the pinned address, timings, TLS facts. */
  dialed(): Dialed | undefined;
  /** performance.now() when the connection was ready for the request (connected, secure). */
  readyAt(): number | undefined;
  /** How the dial failed, when it did. */
  failure(): DialError | undefined;
  /** Destroy the socket whatever state undici left it in (it leaks one after a parser error). */
  close(): void;
}

/** Errors handed to undici carry a code: undici retries forever on UND_ERR_SOCKET, so never use that one. */
function coded(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/** One connector per request hop, for one connection: a second dial on the same hop would be a retry we did not ask for. */
export function dialConnection(target: DialTarget, policy: OutboundPolicy, signal: AbortSignal): DialConnection {
  let dialled = false;
  let result: Dialed | undefined;
  let error: DialError | undefined;
  let socket: Socket | undefined;
  let readyAt: number | undefined;
  const connector: buildConnector.connector = (_opts, callback) => {
    if (dialled) return callback(coded("refusing a second connection on one probe hop", "ERR_PROBE_REDIAL"), null);
    dialled = true;
    const alpn = target.offerH2 ? ["h2", "http/1.1"] : ["http/1.1"];
    dial(policy, { host: target.host, port: target.port, signal, ...(target.tls ? { tls: { alpn } } : {}) }).then(
      (d) => {
        readyAt = performance.now();
        result = d;
        socket = d.socket;
        callback(null, d.socket);
      },
      (err: Error) => {
        if (err instanceof DialError) error = err;
        callback(err, null);
      },
    );
  };
  return {
    connector,
    dialed: () => result,
    readyAt: () => readyAt,
    failure: () => error,
    close: () => socket?.destroy(),
  };
}
