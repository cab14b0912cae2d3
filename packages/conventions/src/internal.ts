/**
 * @roadnerd/conventions/internal — the kernel's parts that the scripts (docs, schemas, new-server), the registry,
 * the orchestrator and the root suites use, and nothing more: a server author needs none of it, and a server's
 * tests find their helpers in `@roadnerd/conventions/testing`. The kernel's own tests import its modules.
 */
import "./define/zod-jitless.ts";

export { buildArgv, matchesTemplate } from "./define/command.ts";
export { baseEnvShape } from "./define/config.ts";
export { MIN_TIMEOUT_MS } from "./define/fields.ts";
export { cutView } from "./define/model-view.ts";
export { inputJsonSchema, outputJsonSchema } from "./define/schemas.ts";
export { parseServerPackage, SERVER_NAME, type ServerIdentity } from "./define/server-package.ts";
export { modelView, VIEW_BUDGET_TOKENS, viewOf } from "./define/tool.ts";
export { renderServerReference } from "./docs/server-docs.ts";
export { renderErrorTable } from "./errors/error-table.ts";
export { ERROR_CODES, ERROR_STATUS } from "./errors/errors.ts";
export { callerKey, RELAYED_CALLER_HEADER } from "./http/caller-key.ts";
export { boundConnections, HTTP_SERVER_BOUNDS } from "./http/connection-bounds.ts";
export { corsHeaders } from "./http/cors.ts";
export { hostHeaderCount, isAllowedOrigin, originRefusalHint } from "./http/guards.ts";
export { SHUTDOWN_FLUSH_MS, SHUTDOWN_GRACE_MS, SHUTDOWN_MESSAGE } from "./http/in-flight.ts";
export { judgePeer, type UidTrust, uidTrust } from "./http/peer-uid.ts";
export { keyMatchesCertificate, PemFileError, type PemKind, readPemFile } from "./http/pem-files.ts";
export { listedTool, type McpTool, type McpToolSource } from "./mcp/adapter.ts";
export { RPC, rpcError, transportErrorBody } from "./mcp/rpc.ts";
export { answerMcpPost, type McpAnswer, type StdioSession, serveStdioSource } from "./mcp/transports.ts";
export { HOP_REFUSAL, isToolHop } from "./outbound/hop.ts";
export { createOutboundPolicy } from "./outbound/index.ts";
export { renderMetadataTable } from "./outbound/metadata.ts";
export { addOwnPort, ROADNERD_PORT_BLOCK } from "./outbound/own-ports.ts";
export { queryToInput } from "./runtime/query-input.ts";
export { parseInput } from "./runtime/run-tool.ts";
