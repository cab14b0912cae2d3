/**
 * Whose call it is, for a fair share of call slots: the servers' (runtime/call-slots.ts) and the gateway's
 * (packages/orchestrator client-share.ts). On loopback the uid that owns the peer's socket (read from the
 * kernel, as for the trust check: a process cannot claim another uid, and more connections or more 127.x
 * addresses do not make it more callers); elsewhere its address: `uid:N` or `addr:<address>`.
 *
 * A gateway calls every server as itself, so on loopback all its clients would share the gateway's uid: one
 * busy client, or anyone else running as that uid, would starve the rest through it. It names the client it
 * relays for in RELAYED_CALLER_HEADER, and that client is the key, the same key its direct calls get. The
 * header counts only from a peer running as this process's uid or as root: a peer that could stop the server
 * anyway (a signal), so naming someone else gains it nothing it did not have. From anyone else it is ignored.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { Socket } from "node:net";
import { peerUid } from "./peer-uid.ts";

/** The header in which a gateway names the client it calls for (`uid:N` or `addr:<address>`). */
export const RELAYED_CALLER_HEADER = "x-roadnerd-caller";

const KEY = /^(uid:\d{1,10}|addr:[0-9A-Za-z.:%_-]{1,64})$/;

/** Peers whose RELAYED_CALLER_HEADER counts: this process's uid and root. */
const relayers = new Set<number>([0, ...(typeof process.getuid === "function" ? [process.getuid()] : [])]);

/** The caller a connection belongs to; with `headers`, a trusted relayer's named client instead. */
export async function callerKey(socket: Socket, headers?: IncomingHttpHeaders): Promise<string> {
  const uid = await peerUid(socket);
  const relayed = headers?.[RELAYED_CALLER_HEADER];
  if (typeof relayed === "string" && uid !== undefined && relayers.has(uid) && KEY.test(relayed)) return relayed;
  return uid !== undefined && uid >= 0 ? `uid:${uid}` : `addr:${socket.remoteAddress ?? "?"}`;
}
