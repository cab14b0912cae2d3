/**
 * MCP requests that are not tool calls (tools/list, initialize, ping…) made cheap and bounded per client. They
 * never wait for a server, so the per-client share of tool calls (client-share.ts) did not count them: one uid's
 * flood of tools/list (each answer the whole catalog, serialized again every time) kept the event loop busy
 * enough that another uid's tool call ran out its deadline (E_TIMEOUT after 8.2 s, sealed attacker review F8).
 * Now every POST to /mcp holds one of its client's ROADNERD_CLIENT_REQUESTS slots (default 8) from its arrival (before its body is
 * read) until it is answered; a tool call moves to the call share once its body says so. And the answers that
 * are the same every time (tools/list) are serialized once.
 */

/** Results serialized once: the kernel answers tools/list with one cached object for every request. */
const serialized = new WeakMap<object, string>();

/**
 * A JSON-RPC answer's text with its result serialized once per result object (the tools/list of a source is
 * the same object every time); any other body as JSON.stringify would write it.
 */
export function answerText(body: unknown, cacheResult: boolean): string {
  if (!cacheResult || typeof body !== "object" || body === null) return JSON.stringify(body);
  const result: unknown = Reflect.get(body, "result");
  if (typeof result !== "object" || result === null) return JSON.stringify(body);
  const rest = Object.fromEntries(Object.entries(body).filter(([key]) => key !== "result"));
  let text = serialized.get(result);
  if (text === undefined) {
    text = JSON.stringify(result);
    serialized.set(result, text);
  }
  const head = JSON.stringify(rest);
  return head === "{}" ? `{"result":${text}}` : `${head.slice(0, -1)},"result":${text}}`;
}
