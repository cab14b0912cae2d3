/**
 * The marker every outbound HTTP request of a RoadNerd tool carries (the kernel's probe, proxy's requests,
 * webcheck's browser through its filter proxy), and every RoadNerd server and the gateway refuse (ADR 0047).
 * A tool allowed only 127.0.0.1 could otherwise call a sibling server on a port the policy does not know
 * (`/sse/http_check?url=http://10.0.0.5/`) and reach whatever that sibling may: the sibling's policy, not ours.
 * Refusing by port alone misses servers started on any port; the marker follows the request wherever it goes.
 */
export const HOP_HEADER = "x-roadnerd-hop";
export const HOP_VALUE = "1";

/** The header to add to a tool's own request (lower case, as node gives names). */
export const HOP_HEADERS: Readonly<Record<string, string>> = Object.freeze({ [HOP_HEADER]: HOP_VALUE });

export const HOP_REFUSAL = "a RoadNerd tool's own request may not call a RoadNerd server";

/** A request (node's headers, names lower case) came from a RoadNerd tool: refused before anything runs. */
export function isToolHop(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  return headers[HOP_HEADER] !== undefined;
}
