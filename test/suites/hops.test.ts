/**
 * Sibling servers on any port (ADR 0047). The attack it re-runs: a network server started on a port outside
 * RoadNerd's block (PORT / ROADNERD_NETWORK_PORT=7201), and tools allowed only 127.0.0.1 aimed at its
 * `/sse/http_check?url=<LAN host>`: network (no allowlist) fetched the LAN host for them, 5/5 paths. Here the
 * LAN host is a listener on 127.0.0.2 that counts what reaches it; the sibling is a real process from dist
 * (so no in-process port bookkeeping can stand in for the fix). Every path must leave it untouched.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testApp } from "@roadnerd/conventions/testing";
import { loadServer } from "@roadnerd/registry";
import { createTestCa, type SpawnedServer, spawnServer, type TestCa } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

type App = Awaited<ReturnType<typeof testApp>>;

describe("a tool's request never makes a sibling server on another port run a tool", () => {
  let lan: Server;
  let lanUrl: string;
  let lanHits = 0;
  let sibling: SpawnedServer;
  /** The same server serving TLS on a port not known as ours: the filter proxy only sees a CONNECT to it. */
  let tlsSibling: SpawnedServer;
  let ca: TestCa;
  let proxy: App;
  let webcheck: App;
  let network: App;
  let artifacts: string;

  beforeAll(async () => {
    lan = createServer((_req, res) => {
      lanHits += 1;
      res.end("lan host answer\n");
    });
    await new Promise<void>((resolve) => lan.listen(0, "127.0.0.2", resolve));
    lanUrl = `http://127.0.0.2:${(lan.address() as AddressInfo).port}/`;
    sibling = await spawnServer("network", { env: { PORT: "0" } });
    ca = await createTestCa();
    const cert = await ca.server("sibling", ["127.0.0.1"]);
    tlsSibling = await spawnServer("network", {
      env: { PORT: "0", TLS_CERT_FILE: cert.certFile, TLS_KEY_FILE: cert.keyFile },
    });
    const env = { OUTBOUND_ALLOW: "127.0.0.1" };
    proxy = await testApp(await loadServer("proxy"), { env });
    artifacts = await mkdtemp(join(tmpdir(), "rn-hops-"));
    webcheck = await testApp(await loadServer("webcheck"), { env: { ...env, WEBCHECK_ARTIFACTS_DIR: artifacts } });
    network = await testApp(await loadServer("network"), { env });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([proxy?.close(), webcheck?.close(), network?.close()]);
    await sibling?.stop();
    await tlsSibling?.stop();
    await ca?.cleanup();
    await new Promise((resolve) => lan?.close(resolve));
    if (artifacts) await rm(artifacts, { recursive: true, force: true });
  });

  it("the sibling is outside RoadNerd's block and would fetch the stand-in if asked directly", async () => {
    const port = Number(new URL(sibling.url).port);
    expect(port < 7100 || port > 7199).toBe(true);
    const res = await fetch(`${sibling.url.replace(/\/$/, "")}/actions/http_check`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: lanUrl }),
    });
    expect(res.status).toBe(200);
    expect(lanHits).toBe(1);
    lanHits = 0;
  });

  it("proxy, webcheck and network tools through the sibling's /sse and /probe: the stand-in is never reached", async () => {
    const base = sibling.url.replace(/\/$/, "");
    const relay = `${base}/sse/http_check?${new URLSearchParams({ url: lanUrl })}`;
    const probe = `${base}/probe?${new URLSearchParams({ module: "http_2xx", target: lanUrl })}`;
    const paths: [string, App, string, Record<string, unknown>][] = [
      ["proxy sso_probe /sse", proxy, "sso_probe", { url: relay }],
      ["proxy sso_probe /probe", proxy, "sso_probe", { url: probe }],
      ["proxy proxy_connectivity_test direct", proxy, "proxy_connectivity_test", { url: relay, proxy: "direct" }],
      ["proxy proxy_connectivity_test via the sibling", proxy, "proxy_connectivity_test", { url: relay, proxy: base }],
      ["webcheck head", webcheck, "head", { url: relay }],
      ["network http_check /sse", network, "http_check", { url: relay }],
      ["network http_check /probe", network, "http_check", { url: probe }],
    ];
    const reached: string[] = [];
    for (const [what, app, tool, input] of paths) {
      const before = lanHits;
      const res = await app.inject({ method: "POST", url: `/actions/${tool}`, payload: input });
      if (lanHits > before) reached.push(`${what}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    }
    // network's own /probe route, the kernel's probe aimed at the sibling.
    const before = lanHits;
    const res = await network.inject({ url: `/probe?${new URLSearchParams({ module: "http_2xx", target: relay })}` });
    if (lanHits > before) reached.push(`network /probe: ${res.statusCode} ${res.body.slice(0, 300)}`);
    console.log(`hops: ${reached.length}/${paths.length + 1} paths reached the stand-in LAN host`);
    expect(reached).toEqual([]);
    expect(lanHits).toBe(0);
  }, 120_000);

  it("webcheck's snapshot (Chromium through the filter proxy) of the sibling's /sse: the stand-in is never reached", async () => {
    const relay = `${sibling.url.replace(/\/$/, "")}/sse/http_check?${new URLSearchParams({ url: lanUrl })}`;
    const res = await webcheck.inject({
      url: `/sse/snapshot?${new URLSearchParams({ url: relay, timeout_ms: "50000", duration_ms: "60000" })}`,
    });
    expect(res.body, "the snapshot ran").toContain("event:");
    expect(lanHits, res.body.slice(0, 600)).toBe(0);
  }, 120_000);

  // Issue 18, A7's leftover: inside an https tunnel the filter proxy cannot mark the request, and a navigation
  // to /probe (not /sse, whose navigations are refused) ran the sibling's probe of the stand-in.
  it("webcheck's snapshot of a TLS-serving sibling's /probe (https, tunnelled): the stand-in is never reached", async () => {
    expect(tlsSibling.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+/);
    const probe = `${tlsSibling.url.replace(/\/$/, "")}/probe?${new URLSearchParams({ module: "http_2xx", target: lanUrl })}`;
    const res = await webcheck.inject({
      url: `/sse/snapshot?${new URLSearchParams({ url: probe, timeout_ms: "50000", duration_ms: "60000" })}`,
    });
    expect(res.body, "the snapshot ran").toContain("event:");
    expect(lanHits, res.body.slice(0, 600)).toBe(0);
  }, 120_000);

  it("the sibling refuses a marked request with 403 E_FORBIDDEN before running anything", async () => {
    const res = await fetch(
      `${sibling.url.replace(/\/$/, "")}/sse/http_check?${new URLSearchParams({ url: lanUrl })}`,
      {
        headers: { "x-roadnerd-hop": "1" },
      },
    );
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({
      error: { code: "E_FORBIDDEN", message: "a RoadNerd tool's own request may not call a RoadNerd server" },
    });
    const post = await fetch(`${sibling.url.replace(/\/$/, "")}/actions/http_check`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-roadnerd-hop": "1" },
      body: JSON.stringify({ url: lanUrl }),
    });
    expect(post.status).toBe(403);
    expect(lanHits).toBe(0);
  });
});
