/**
 * A captive portal a test starts: one "network" server on 127.0.0.1 whose behaviour the test switches
 * between the kinds of portal seen in the field, and a login server on 127.0.0.2 (another host, still
 * loopback). Plus an RFC 8908 CAPPORT API server. Probe paths: /generate_204 (expects 204),
 * /expected (expects the exact body), the OSes' well-known check paths with their real answers
 * (WELL_KNOWN_ANSWERS), anything else (a plain page, like neverssl.com).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { KeyCert } from "./certs.ts";
import { NM_EXPECTED_BODY, startTestServer, type TestServer } from "./http-servers.ts";

export type PortalMode =
  /** No portal: every probe gets its expected answer. */
  | "open"
  /** Every request is 302-redirected to the login page on another host. */
  | "redirect"
  /** Every request gets 511 Network Authentication Required with a link to the login page. */
  | "status511"
  /** Every request gets 200 with the login page (a hijacking portal). */
  | "login200"
  /** Every request gets 200 with a page whose meta refresh sends the browser to the login host. */
  | "metaRefresh200"
  /** Every request gets 200 with a page whose script sends the browser to the login host. */
  | "scriptRedirect200"
  /** Every request gets 200 with an empty body (a broken transparent proxy). */
  | "empty200"
  /** Every request is redirected within the same host to the real answer (no portal, odd network). */
  | "sameHostRedirect";

/**
 * For OUTBOUND_DENY in every test that spawns a server: the real connectivity-check hosts, denied by name
 * before any lookup, so a default that leaks into a test fails instead of reaching the internet.
 */
export const REAL_PROBE_HOSTS_DENY =
  "neverssl.com,*.neverssl.com,*.gstatic.com,nmcheck.gnome.org,*.apple.com,*.msftconnecttest.com,*.msftncsi.com";

export const LOGIN_PAGE =
  '<html><head><title>Guest Wi-Fi</title></head><body><form action="/accept" method="post">Accept the terms<button>Connect</button></form></body></html>';
export const PLAIN_PAGE = "<html><body>a plain page over plain HTTP</body></html>";

/**
 * What the real connectivity-check URLs answer on a free network, as published by each OS vendor (and
 * checked against captures): path → [status, body].
 */
export const WELL_KNOWN_ANSWERS: Readonly<Record<string, [number, string]>> = {
  "/gen_204": [204, ""],
  "/hotspot-detect.html": [200, "<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>\n"],
  "/connecttest.txt": [200, "Microsoft Connect Test"],
  "/ncsi.txt": [200, "Microsoft NCSI"],
  "/check_network_status.txt": [200, "NetworkManager is online\n"],
  "/success.txt": [200, "success\n"],
  "/canonical.html": [
    200,
    '<meta http-equiv="refresh" content="0;url=https://support.mozilla.org/kb/captive-portal"/>',
  ],
};

export interface CaptivePortal {
  /** The "network": probe it at /generate_204, /expected, / … */
  url: string;
  /** The login page, on another host (127.0.0.2). */
  loginUrl: string;
  mode: PortalMode;
  /** Connections the network server accepted. */
  connections(): number;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "text/html", "content-length": Buffer.byteLength(body), ...headers });
  res.end(body);
}

function honest(path: string, res: ServerResponse, expectedBody: string): void {
  const known = Object.hasOwn(WELL_KNOWN_ANSWERS, path) ? WELL_KNOWN_ANSWERS[path] : undefined;
  if (path === "/generate_204") send(res, 204, "");
  else if (path === "/expected") send(res, 200, expectedBody, { "content-type": "text/plain" });
  else if (known) send(res, known[0], known[1], { "content-type": "text/plain" });
  else send(res, 200, PLAIN_PAGE);
}

export async function startCaptivePortal(expectedBody = NM_EXPECTED_BODY): Promise<CaptivePortal> {
  const login = await startTestServer((_req, res) => send(res, 200, LOGIN_PAGE), { host: "127.0.0.2" });
  const loginUrl = `${login.url}/login`;
  const portal: { mode: PortalMode } = { mode: "open" };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://test.invalid").pathname;
    switch (portal.mode) {
      case "open":
        return honest(path, res, expectedBody);
      case "redirect":
        return send(res, 302, "", { location: `${loginUrl}?continue=${encodeURIComponent(path)}` });
      case "status511":
        return send(
          res,
          511,
          `<html><head><meta http-equiv="refresh" content="0; url=${loginUrl}"></head><body>Log in first</body></html>`,
        );
      case "login200":
        return send(res, 200, LOGIN_PAGE);
      case "metaRefresh200":
        return send(
          res,
          200,
          `<html><head><meta http-equiv="refresh" content="1; url=${loginUrl}"></head><body>One moment…</body></html>`,
        );
      case "scriptRedirect200":
        return send(res, 200, `<html><body><script>window.location.href = "${loginUrl}";</script></body></html>`);
      case "empty200":
        return send(res, 200, "");
      case "sameHostRedirect":
        return path.startsWith("/real/")
          ? honest(path.slice(5), res, expectedBody)
          : send(res, 302, "", { location: `/real${path}` });
    }
  };
  let network: TestServer;
  try {
    network = await startTestServer(handler);
  } catch (err) {
    await login.close();
    throw err;
  }
  return {
    url: network.url,
    loginUrl,
    get mode() {
      return portal.mode;
    },
    set mode(m: PortalMode) {
      portal.mode = m;
    },
    connections: network.connections,
    close: async () => {
      await Promise.all([network.close(), login.close()]);
    },
  };
}

export interface CapportApi {
  /** The API URL (https). */
  url: string;
  /** What the API says; change it between calls. */
  state: { captive: boolean; userPortalUrl: string };
  close(): Promise<void>;
}

/** An RFC 8908 API over HTTPS: `{ captive, user-portal-url }` as application/captive+json. */
export async function startCapportApi(tls: KeyCert, userPortalUrl: string): Promise<CapportApi> {
  const state = { captive: true, userPortalUrl };
  const server = await startTestServer(
    (req, res) => {
      const accept = String(req.headers.accept ?? "");
      const body = JSON.stringify({
        captive: state.captive,
        "user-portal-url": state.userPortalUrl,
        "seconds-remaining": state.captive ? 0 : 3600,
        "accept-seen": accept,
      });
      res.writeHead(200, { "content-type": "application/captive+json", "content-length": Buffer.byteLength(body) });
      res.end(body);
    },
    { tls },
  );
  return { url: `${server.url}/capport`, state, close: server.close };
}
