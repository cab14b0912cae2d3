/** @roadnerd/client — a small typed client for a RoadNerd server's /healthz, /actions and /sse. */
export {
  type ActionEntry,
  type CallOptions,
  type ClientOptions,
  createClient,
  type Health,
  MAX_ANSWER_BYTES,
  RoadNerdClient,
} from "./client.ts";
export { RemoteError } from "./remote-error.ts";
export { type SseEvent, type SseEventName, streamEvents } from "./sse.ts";
export { type ClientTls, TlsError, tlsAgent } from "./tls.ts";
