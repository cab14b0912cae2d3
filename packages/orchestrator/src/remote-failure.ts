/**
 * A server that could not be reached or understood, as a typed code (never E_INTERNAL, which says "a bug of
 * ours"): the `hosts` tool reports it as such, and a call under way says it as E_ATTACH. The codes come from
 * the socket error (undici's, or the OS's below it) or from an answer that was not a RoadNerd server's.
 */
import { type ErrorInfo, fieldOf } from "./errors.ts";

const REFUSED = new Set(["ECONNREFUSED"]);
const UNREACHABLE = new Set(["EHOSTUNREACH", "ENETUNREACH", "EHOSTDOWN", "ENETDOWN"]);
const NO_NAME = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_NONAME"]);
const SLOW = new Set(["ETIMEDOUT", "UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);
const CUT = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

/** The first socket-level code on the error or its causes (undici wraps the OS error once or twice). */
function socketCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 3 && e !== undefined; depth += 1) {
    const code = fieldOf(e, "code");
    if (typeof code === "string" && !code.startsWith("E_")) return code;
    e = fieldOf(e, "cause");
  }
  return undefined;
}

/** undici's HTTPParserError (its `code` is often unset): the peer wrote bytes that are not an HTTP answer. */
function notHttp(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; depth < 3 && e !== undefined; depth += 1) {
    const code = fieldOf(e, "code");
    if (fieldOf(e, "name") === "HTTPParserError" || (typeof code === "string" && code.startsWith("HPE_"))) return true;
    e = fieldOf(e, "cause");
  }
  return false;
}

/** How reaching `url` failed, typed; undefined when the error is something else (a server's own error body). */
export function remoteFailure(label: string, url: string, err: unknown): ErrorInfo | undefined {
  if (fieldOf(err, "unexpected") === true) {
    return {
      code: "E_ATTACH",
      message: `${label}: ${url} answered, but not as a RoadNerd server (${String(fieldOf(err, "message"))})`,
      hint: "check the URL: a proxy, a redirect or another service answers there",
    };
  }
  if (notHttp(err)) {
    return {
      code: "E_ATTACH",
      message: `${label}: ${url} answered, but not in HTTP (${String(fieldOf(err, "message")).slice(0, 120)})`,
      hint: "check the URL: another service (not HTTP) listens there",
    };
  }
  const code = socketCode(err);
  if (code === undefined) return undefined;
  if (REFUSED.has(code)) {
    return {
      code: "E_CONN_REFUSED",
      message: `${label}: nothing listens at ${url} (${code})`,
      hint: "is the server running on that host, on that port?",
    };
  }
  if (UNREACHABLE.has(code)) return { code: "E_UNREACHABLE", message: `${label}: no route to ${url} (${code})` };
  if (NO_NAME.has(code))
    return { code: "E_DNS_FAIL", message: `${label}: the name in ${url} does not resolve (${code})` };
  if (SLOW.has(code)) return { code: "E_TIMEOUT", message: `${label}: ${url} did not answer in time (${code})` };
  if (CUT.has(code)) return { code: "E_ATTACH", message: `${label}: the connection to ${url} was cut (${code})` };

  return undefined;
}
