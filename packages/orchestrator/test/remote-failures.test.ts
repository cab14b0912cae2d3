/**
 * Regression (attacker review F10): a fleet host that fails in the plumbing — nothing listening, a redirect, an
 * answer that is not a RoadNerd server's, a host that never answers — came back from the `hosts` tool and from
 * host-routed calls as E_INTERNAL ("a bug on our side"). Each is now a typed code that says what failed.
 * Real loopback servers play the hosts; the attacher and the hosts tool are the gateway's own.
 */
import { once } from "node:events";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readRegistry } from "@roadnerd/registry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Attacher } from "../src/attach.ts";
import { fleetHealth } from "../src/gateway-hosts.ts";
import type { RemoteServer } from "../src/hosts.ts";

const fakes: Server[] = [];
let attacher: Attacher;

/** A loopback HTTP server answering every request with `answer` (or never, when it is undefined). */
async function fake(answer?: (res: ServerResponse, path: string) => void): Promise<string> {
  const server = createServer((req, res) => answer?.(res, (req.url ?? "").split("?")[0] ?? ""));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  fakes.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<string> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await new Promise((r) => server.close(r));
  return url;
}

const HOSTS = ["refused", "redirect", "notjson", "html502", "silent"] as const;
let urls: Record<(typeof HOSTS)[number], string>;

beforeAll(async () => {
  urls = {
    refused: await closedPort(),
    redirect: await fake((res) => res.writeHead(302, { location: "http://10.0.0.5/" }).end()),
    notjson: await fake((res) => res.writeHead(200, { "content-type": "text/plain" }).end("hello")),
    html502: await fake((res) => res.writeHead(502, { "content-type": "text/html" }).end("<h1>Bad Gateway</h1>")),
    silent: await fake(),
  };
  const hosts = new Map(HOSTS.map((h) => [h, new Map<string, RemoteServer>([["network", { url: urls[h] }]])] as const));
  attacher = new Attacher({ servers: readRegistry(), hosts, attachTimeoutMs: 1_500 });
});

afterAll(async () => {
  await attacher?.close();
  for (const s of fakes) s.closeAllConnections();
  await Promise.all(fakes.map((s) => new Promise((r) => s.close(r))));
});

const EXPECTED: Record<(typeof HOSTS)[number], string> = {
  refused: "E_CONN_REFUSED",
  redirect: "E_ATTACH",
  notjson: "E_ATTACH",
  html502: "E_ATTACH",
  silent: "E_TIMEOUT",
};

describe("remote failures are typed, never E_INTERNAL", () => {
  it("the hosts tool: each failing host with its code and the URL", async () => {
    const { hosts } = await fleetHealth(attacher);
    const codes = Object.fromEntries(hosts.map((h) => [h.host, h.servers[0]?.error?.code]));
    expect(codes).toEqual(EXPECTED);
    for (const h of hosts) expect(h.servers[0]?.error?.message).toContain(urls[h.host as keyof typeof urls]);
  });

  // A host whose /healthz is a network server's, and whose tool answers are not: the attach passes, the call fails.
  it.each([
    ["a redirect", (res: ServerResponse) => res.writeHead(302, { location: "http://10.0.0.5/" }).end()],
    [
      "a proxy's HTML 502",
      (res: ServerResponse) => res.writeHead(502, { "content-type": "text/html" }).end("<h1>x</h1>"),
    ],
    ["a 200 that is not JSON", (res: ServerResponse) => res.writeHead(200).end("hello")],
  ])("a call routed to a host answering %s is E_ATTACH with the URL", async (_, answer) => {
    const url = await fake((res, path) =>
      path === "/healthz"
        ? res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true,"name":"network","version":"1"}')
        : answer(res),
    );
    const hosts = new Map([["h", new Map<string, RemoteServer>([["network", { url }]])]]);
    const one = new Attacher({ servers: readRegistry(), hosts, attachTimeoutMs: 1_500 });
    try {
      const err = await one.call("network", "interfaces_list", {}, { host: "h" }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toMatchObject({
        code: "E_ATTACH",
        message: expect.stringContaining(`${url} answered, but not as a RoadNerd server`),
      });
    } finally {
      await one.close();
    }
  });

  it.each(HOSTS.filter((h) => h !== "silent"))("a call routed to host %s never attaches: E_ATTACH", async (host) => {
    const err = await attacher.call("network", "interfaces_list", { timeout_ms: 500 }, { host }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: "E_ATTACH", phase: "remote" });
  });
});
