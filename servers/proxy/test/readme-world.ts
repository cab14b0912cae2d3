/**
 * The world the README's curl lines and the root suites run in, on fixed loopback addresses because the README
 * names them: a forward proxy on 127.0.0.1:3128, an app on 127.0.0.1:8080 whose sign-on goes to a Keycloak-like
 * IdP on 127.0.0.2:8080, and an https IdP on localhost:8443 with a private CA (trusted through PROXY_CA_FILE).
 * Several suites may start it at once: a port already taken is left to the world that holds it (the lines
 * still answer, as a diagnosis at worst).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { generateTestCerts, type KeyCert } from "@roadnerd/testkit";
import { type ForwardProxy, startForwardProxy } from "./helpers/forward-proxy.ts";

const IDP = "http://127.0.0.2:8080";
const ISSUER = "https://localhost:8443/realms/corp";

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { location }).end();
}

interface Fixed {
  close(): Promise<void>;
}

/** A web server on a fixed loopback address and port (the README names it). */
async function listenFixed(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  options: { host?: string; port: number; tls?: KeyCert },
): Promise<Fixed> {
  const server = options.tls ? createHttpsServer(options.tls, handler) : createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "127.0.0.1", () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function tolerant<T>(start: () => Promise<T>): Promise<T | undefined> {
  try {
    return await start();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EADDRINUSE") return undefined;
    throw err;
  }
}

export async function startReadmeWorld() {
  const certs = await generateTestCerts();
  const closers: Array<{ close(): Promise<void> }> = [];
  const proxy: ForwardProxy | undefined = await tolerant(() => startForwardProxy({ port: 3128 }));
  const app = await tolerant(() =>
    listenFixed(
      (req, res) => {
        if (req.url === "/app") return redirect(res, "/login");
        if (req.url === "/login") {
          return redirect(res, `${IDP}/realms/corp/protocol/openid-connect/auth?client_id=app&response_type=code`);
        }
        if (req.url === "/to-entra") {
          return redirect(
            res,
            "https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=app&response_type=code",
          );
        }
        res.writeHead(200, { "content-type": "text/plain" }).end("hello from the app\n");
      },
      { port: 8080 },
    ),
  );
  const idp = await tolerant(() =>
    listenFixed((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<form>login</form>"), {
      host: "127.0.0.2",
      port: 8080,
    }),
  );
  const discovery = await tolerant(() =>
    listenFixed(
      (req, res) => {
        if (req.url !== "/realms/corp/.well-known/openid-configuration") {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            issuer: ISSUER,
            authorization_endpoint: `${ISSUER}/protocol/openid-connect/auth`,
            token_endpoint: `${ISSUER}/protocol/openid-connect/token`,
            jwks_uri: `${ISSUER}/protocol/openid-connect/certs`,
            response_types_supported: ["code"],
            subject_types_supported: ["public"],
            id_token_signing_alg_values_supported: ["RS256"],
          }),
        );
      },
      { tls: certs.valid, port: 8443 },
    ),
  );
  for (const s of [proxy, app, idp, discovery]) if (s) closers.push(s);
  return {
    env: { OUTBOUND_ALLOW: "127.0.0.1,127.0.0.2,localhost", PROXY_CA_FILE: certs.caFile },
    async close() {
      for (const c of closers) await c.close();
      await certs.cleanup();
    },
  };
}
