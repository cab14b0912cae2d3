/**
 * What reaches the SDK is a single, well-formed JSON-RPC 2.0 message. Batches are refused (the current
 * protocol revision has none); a request to a method we serve whose params do not fit gets a clean −32602
 * naming the field and carrying our code, instead of the SDK's zod dump. Used by both transports.
 */
import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { RPC, type RpcError, rpcError } from "./rpc.ts";

export type Checked =
  /** `isRequest` (an id and a method) and `isInitialize`, known from the checks already made. */
  | { ok: true; message: JSONRPCMessage; isRequest: boolean; isInitialize: boolean }
  /** `response` is undefined for a bad notification: there is nobody to answer. */
  | { ok: false; status: number; response: RpcError | undefined };

const PARAMS_SCHEMAS: Readonly<Record<string, { safeParse(v: unknown): { success: boolean; error?: unknown } }>> = {
  initialize: InitializeRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
  ping: PingRequestSchema,
};

/** "params.arguments: expected record, received array" — the first issues, no dump. */
function cleanIssues(error: unknown): string {
  const issues = (error as { issues?: Array<{ path: PropertyKey[]; message: string }> }).issues ?? [];
  return issues
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join(".") || "message"}: ${i.message.replace(/^Invalid input: /, "")}`)
    .join("; ")
    .slice(0, 300);
}

function idOf(raw: Record<string, unknown>): string | number | null {
  const id = raw.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

/** A request or notification whose envelope is plainly right (what the SDK's own schema would accept). */
function wellFormed(m: Record<string, unknown>): boolean {
  if (m.jsonrpc !== "2.0" || typeof m.method !== "string" || "result" in m || "error" in m) return false;
  if ("id" in m && typeof m.id !== "string" && !(typeof m.id === "number" && Number.isInteger(m.id))) return false;
  return m.params === undefined || (typeof m.params === "object" && m.params !== null && !Array.isArray(m.params));
}

const isPlainObject = (v: unknown): boolean => typeof v === "object" && v !== null && !Array.isArray(v);

/** tools/call { name, arguments } or tools/list with nothing else: nothing the SDK's schema could refuse. */
function plainCall(m: Record<string, unknown>): boolean {
  const params = m.params as Record<string, unknown> | undefined;
  if (m.method === "tools/list")
    return params === undefined || (isPlainObject(params) && Object.keys(params).length === 0);
  if (m.method !== "tools/call" || !isPlainObject(params) || typeof params?.name !== "string") return false;
  const keys = Object.keys(params);
  return (
    keys.every((k) => k === "name" || k === "arguments") &&
    (params.arguments === undefined || isPlainObject(params.arguments))
  );
}

export function checkMessage(raw: unknown): Checked {
  if (Array.isArray(raw)) {
    const message = raw.length === 0 ? "empty batch" : "JSON-RPC batches are not supported";
    return {
      ok: false,
      status: 400,
      response: rpcError(null, RPC.InvalidRequest, `${message}: send one message per request`, "E_INVALID_INPUT"),
    };
  }
  if (!raw || typeof raw !== "object") {
    return {
      ok: false,
      status: 400,
      response: rpcError(null, RPC.InvalidRequest, "not a JSON-RPC 2.0 message", "E_INVALID_INPUT"),
    };
  }
  const message = raw as Record<string, unknown>;
  const id = idOf(message);
  const isRequest = "id" in message && "method" in message;
  const schema =
    typeof message.method === "string" && Object.hasOwn(PARAMS_SCHEMAS, message.method)
      ? PARAMS_SCHEMAS[message.method]
      : undefined;
  if (isRequest && schema && !plainCall(message)) {
    const parsed = schema.safeParse({ method: message.method, params: message.params });
    if (!parsed.success) {
      const text = `${message.method}: invalid params: ${cleanIssues(parsed.error)}`;
      return { ok: false, status: 200, response: rpcError(id, RPC.InvalidParams, text, "E_INVALID_INPUT") };
    }
  }
  const known = { isRequest, isInitialize: message.method === "initialize" };
  // The common case costs no schema parse: a request or notification with the envelope's basic shape.
  if (wellFormed(message)) return { ok: true, message: message as JSONRPCMessage, ...known };
  // The mistakes a hand-written message makes, said plainly (the union schema's own words are not).
  const plain =
    message.jsonrpc !== "2.0"
      ? 'jsonrpc must be "2.0"'
      : "id" in message && typeof message.id !== "string" && typeof message.id !== "number"
        ? "id must be a string or a number"
        : "method" in message && typeof message.method !== "string"
          ? "method must be a string"
          : undefined;
  if (plain) {
    const response = rpcError(null, RPC.InvalidRequest, `not a JSON-RPC 2.0 message: ${plain}`, "E_INVALID_INPUT");
    return { ok: false, status: 400, response };
  }
  const envelope = JSONRPCMessageSchema.safeParse(raw);
  if (!envelope.success) {
    const text = `not a JSON-RPC 2.0 message: ${cleanIssues(envelope.error)}`;
    return {
      ok: false,
      status: 400,
      response: "id" in message ? rpcError(id, RPC.InvalidRequest, text, "E_INVALID_INPUT") : undefined,
    };
  }
  return { ok: true, message: envelope.data, ...known };
}
