/**
 * A server that reaches only what OUTBOUND_ALLOW names (webcheck, proxy) says "start the server with
 * OUTBOUND_ALLOW=…". From the command line the server was started by someone else: the one `roadnerd up` (pnpm
 * start) runs takes it as that server's own setting (`--set webcheck.OUTBOUND_ALLOW=…`, which narrows no other
 * server; `OUTBOUND_ALLOW=… pnpm start` would narrow all of them), while one `roadnerd call` starts itself
 * inherits it from the command's environment. The hint says which, after the server's own.
 */
import type { ErrorInfo } from "../errors.ts";

const EXAMPLE = "<hosts or CIDRs>";

export function outboundHint(error: ErrorInfo, server: string, runningAlready: boolean): ErrorInfo {
  if (error.code !== "E_FORBIDDEN" || !/OUTBOUND_ALLOW/.test(`${error.message} ${error.hint ?? ""}`)) return error;
  const here = runningAlready
    ? `the ${server} server that answered was already running: under \`roadnerd up\` (pnpm start) restart it with --set ${server}.OUTBOUND_ALLOW=${EXAMPLE}, for ${server} alone`
    : `the ${server} server this command starts inherits it: OUTBOUND_ALLOW=${EXAMPLE} roadnerd call …`;
  return { ...error, hint: error.hint ? `${error.hint}; ${here}` : here };
}
