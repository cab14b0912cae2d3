/**
 * sso_probe across named hosts, as on a corporate network: the proxy server runs inside a network namespace
 * this test creates, resolving names through the test's DNS server (on the root end of a veth), and the app and
 * its IdP are web servers on that link. The DNS server records every question, so the test proves that an IdP
 * outside the allowlist was named from its Location and never looked up, let alone contacted.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient, type RoadNerdClient } from "@roadnerd/client";
import {
  createNetnsLab,
  type NetnsLab,
  netnsSkipReason,
  type SpawnedServer,
  startDnsServer,
  type TestDnsServer,
} from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const skip = netnsSkipReason();

interface Web {
  server: Server;
  port: number;
  requests: string[];
}

async function listen(host: string, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Web> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.headers.host} ${req.method} ${req.url}`);
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return { server, port: (server.address() as AddressInfo).port, requests };
}

describe.skipIf(skip !== undefined)(`sso_probe across named hosts in a namespace${skip ? ` (${skip})` : ""}`, () => {
  let lab: NetnsLab;
  let dns: TestDnsServer;
  let app: Web;
  let idp: Web;
  let proxyServer: SpawnedServer;
  let client: RoadNerdClient;

  beforeAll(async () => {
    lab = createNetnsLab();
    try {
      const ns = lab.addNs();
      const link = lab.linkToRoot(ns);
      const root = link.rootAddr;
      idp = await listen(root, (_req, res) =>
        res.writeHead(200, { "content-type": "text/html" }).end("<form>login</form>"),
      );
      const routes: Record<string, string> = {
        "/": "/sso/start",
        "/sso/start": `http://sso.corp.test:${idp.port}/adfs/ls/?SAMLRequest=fZJBb&RelayState=r1`,
        "/cloud": "https://login.microsoftonline.com/common/oauth2/v2.0/authorize?client_id=a&response_type=code",
        "/elsewhere": `http://evil.corp.test:${idp.port}/authorize?client_id=a&response_type=code`,
      };
      app = await listen(root, (req, res) => {
        const location = routes[req.url ?? ""];
        if (location) res.writeHead(302, { location }).end();
        else res.writeHead(200).end("app");
      });
      dns = await startDnsServer({
        host: root,
        port: 53,
        records: [
          { name: "app.corp.test", type: "A", ttl: 60, data: root },
          { name: "sso.corp.test", type: "A", ttl: 60, data: root },
          { name: "evil.corp.test", type: "A", ttl: 60, data: root },
        ],
      });
      lab.etcFile(ns, "nsswitch.conf", "hosts: files dns\n");
      lab.etcFile(ns, "hosts", "127.0.0.1 localhost\n");
      lab.etcFile(ns, "resolv.conf", `nameserver ${root}\noptions timeout:1 attempts:1\n`);
      // A process started with `ip netns exec` must see our resolver, or a lookup could reach the real one.
      expect(lab.exec(ns, ["cat", "/etc/resolv.conf"])).toContain(`nameserver ${root}`);
      proxyServer = await lab.serve(ns, "proxy", {
        env: { HOST: link.nsAddr, OUTBOUND_ALLOW: "app.corp.test,sso.corp.test" },
      });
      client = createClient(proxyServer.url, { token: proxyServer.token });
    } catch (err) {
      await lab.cleanup();
      throw err;
    }
  });

  afterAll(async () => {
    for (const w of [app, idp]) w?.server.close();
    await dns?.close();
    await lab?.cleanup();
  });

  it("follows app.corp.test to AD FS on sso.corp.test, by name, and names it", async () => {
    const r = await client.call<Record<string, unknown>>("sso_probe", { url: `http://app.corp.test:${app.port}/` });
    expect(r).toMatchObject({
      redirect_chain: [
        { status: 302, host: "app.corp.test" },
        { status: 302, host: "app.corp.test" },
        { status: 200, host: "sso.corp.test", idp: "AD FS" },
      ],
      idp: "AD FS",
      idp_host: "sso.corp.test",
      protocol: "saml",
    });
    expect(idp.requests).toEqual([`sso.corp.test:${idp.port} GET /adfs/ls/?SAMLRequest=fZJBb&RelayState=r1`]);
    expect(dns.queries.map((q) => q.name)).toContain("sso.corp.test");
  });

  it("names Microsoft Entra ID from the Location, and never looks the name up", async () => {
    const r = await client.call<Record<string, unknown>>("sso_probe", {
      url: `http://app.corp.test:${app.port}/cloud`,
    });
    expect(r).toMatchObject({
      idp: "Microsoft Entra ID",
      idp_host: "login.microsoftonline.com",
      stopped: { host: "login.microsoftonline.com" },
    });
    expect(dns.queries.some((q) => q.name.includes("microsoftonline"))).toBe(false);
  });

  it("ends at a host the allowlist does not name: no lookup, no request", async () => {
    const before = idp.requests.length;
    const r = await client.call<Record<string, unknown>>("sso_probe", {
      url: `http://app.corp.test:${app.port}/elsewhere`,
    });
    expect(r).toMatchObject({ idp: "OIDC provider", stopped: { host: "evil.corp.test" } });
    expect(dns.queries.some((q) => q.name === "evil.corp.test")).toBe(false);
    expect(idp.requests.length).toBe(before);
  });

  it("refuses a first URL whose name is not listed, before any lookup", async () => {
    await expect(client.call("sso_probe", { url: `http://evil.corp.test:${app.port}/` })).rejects.toMatchObject({
      code: "E_FORBIDDEN",
    });
    expect(dns.queries.some((q) => q.name === "evil.corp.test")).toBe(false);
  });
});
