/**
 * JSON-RPC error bodies for the MCP surfaces, without loading the SDK: the /mcp route answers its own errors
 * (bad JSON, 405, 415) before the SDK is ever imported.
 */
import type { ErrorCode as OurCode } from "../errors/errors.ts";

/** JSON-RPC 2.0 error codes (the SDK's ErrorCode has the same values); −32000 is what its transport uses. */
export const RPC = {
  ParseError: -32700,
  InvalidRequest: -32600,
  InvalidParams: -32602,
  InternalError: -32603,
  TransportError: -32000,
} as const;

export interface RpcError {
  jsonrpc: "2.0";
  id: string | number | null;
  error: { code: number; message: string; data?: { code: OurCode } };
}

export function rpcError(id: string | number | null, code: number, message: string, ours: OurCode): RpcError {
  return { jsonrpc: "2.0", id, error: { code, message, data: { code: ours } } };
}

/** As the SDK's Streamable HTTP transport answers a request it cannot take: −32000, id null, no data. */
export function transportErrorBody(message: string): RpcError {
  return { jsonrpc: "2.0", error: { code: RPC.TransportError, message }, id: null };
}
