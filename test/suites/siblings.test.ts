/**
 * Sibling targets, for every registered server: RoadNerd's own ports are never a target of another RoadNerd
 * server unless OUTBOUND_ALLOW names that host:port. The attack it re-runs: with OUTBOUND_ALLOW=127.0.0.1 (the
 * READMEs' example), `sso_probe http://127.0.0.1:7101/sse/http_check?url=http://10.0.0.5/` made network (which
 * has no allowlist) fetch a LAN host, and a webcheck snapshot of that URL showed its answer.
 *
 * 1. Every URL target field of every open-world tool and stream of every server refuses every registered
 *    server's default port (and the gateway's) on 127.0.0.1, [::1] and localhost: 403 E_FORBIDDEN before work.
 * 2. The attack end to end on real sockets: a real network server listening on a RoadNerd port, proxy's
 *    sso_probe over HTTP aimed at its /sse/http_check: refused, and network never sees the request.
 */
import type { AddressInfo } from "node:net";
import { testApp, testRuntime } from "@roadnerd/conventions/testing";
import { loadServer, selectedServers } from "@roadnerd/registry";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type World, worldFor } from "./lib/worlds.ts";

const registered = selectedServers();
const GATEWAY_PORT = 7100;
const siblingPorts = [GATEWAY_PORT, ...registered.map((s) => s.defaultPort)];
const siblingUrls = siblingPorts.flatMap((port) =>
  ["127.0.0.1", "[::1]", "localhost", "127.1.2.3"].flatMap((host) =>
    ["http", "https"].map((scheme) => `${scheme}://${host}:${port}/sse/http_check?url=http://10.0.0.5/`),
  ),
);
const tally = { attempts: 0, refused: 0 };

describe.each(registered)("sibling targets against $name", (server) => {
  let world: World | undefined;
  let app: Awaited<ReturnType<typeof testApp>>;

  beforeAll(async () => {
    world = await worldFor(server);
    const env = { ...(world?.env ?? {}), OUTBOUND_ALLOW: "127.0.0.0/8,::1,localhost" };
    app = await testApp(await loadServer(server.name), { env });
  });
  afterAll(async () => {
    await app?.close();
    await world?.close();
  });

  it("every URL target refuses every RoadNerd port on this machine, even with loopback allowed", async () => {
    const def = await loadServer(server.name);
    const items = [
      ...def.tools.map((t) => ({ spec: t, stream: false })),
      ...def.streams.map((s) => ({ spec: s, stream: true })),
    ].filter((x) => x.spec.openWorld);
    for (const { spec, stream } of items) {
      for (const [field, kind] of Object.entries(spec.targets ?? {})) {
        if (kind !== "url") continue;
        for (const value of siblingUrls) {
          tally.attempts += 1;
          const input = { ...(spec.example as Record<string, unknown>), [field]: value };
          const res = stream
            ? await app.inject({ url: `/sse/${spec.name}?${new URLSearchParams(input as Record<string, string>)}` })
            : await app.inject({ method: "POST", url: `/actions/${spec.name}`, payload: input });
          const what = `${spec.name}.${field} = ${value}: ${res.statusCode} ${res.body.slice(0, 200)}`;
          // A scheme the tool does not take (tls_info: https only) is refused by its schema first.
          if (res.statusCode === 400 && res.json().error.code === "E_INVALID_INPUT") continue;
          expect(res.statusCode, what).toBe(403);
          expect(res.json().error.code, what).toBe("E_FORBIDDEN");
          tally.refused += 1;
        }
      }
    }
  }, 60_000);
});

describe("the attack end to end: proxy's sso_probe at network's /sse/http_check", () => {
  const NETWORK_PORT = 7199; // inside RoadNerd's block, free in this sealed namespace
  let network: Awaited<ReturnType<typeof testApp>>;
  let proxy: Awaited<ReturnType<typeof testApp>>;
  let proxyPort: number;
  const seen: string[] = [];

  beforeAll(async () => {
    network = await testApp(await loadServer("network"));
    network.addHook("onRequest", async (req) => void seen.push(req.url));
    await network.listen({ host: "127.0.0.1", port: NETWORK_PORT });
    proxy = await testApp(await loadServer("proxy"), { env: { OUTBOUND_ALLOW: "127.0.0.1" } });
    await proxy.listen({ host: "127.0.0.1", port: 0 });
    proxyPort = (proxy.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await proxy?.close();
    await network?.close();
    console.log(`siblings: ${tally.refused}/${tally.attempts} sibling targets refused before any work`);
  });

  it("refused with E_FORBIDDEN; network never sees the request", async () => {
    const url = `http://127.0.0.1:${NETWORK_PORT}/sse/http_check?url=http://10.0.0.5/`;
    const res = await request(`http://127.0.0.1:${proxyPort}/actions/sso_probe`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url }),
    });
    const body = (await res.body.json()) as { error?: { code: string; message: string } };
    expect(res.statusCode).toBe(403);
    expect(body.error).toMatchObject({ code: "E_FORBIDDEN", message: expect.stringContaining("RoadNerd server") });
    expect(seen).toEqual([]);
    // The operator can still name it: the same policy with OUTBOUND_ALLOW=127.0.0.1:7199 lets it through.
    const named = testRuntime(await loadServer("proxy"), { env: { OUTBOUND_ALLOW: `127.0.0.1:${NETWORK_PORT}` } });
    expect(() => named.outbound.checkAddress("127.0.0.1", undefined, NETWORK_PORT)).not.toThrow();
  });
});
