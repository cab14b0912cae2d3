// tcp_port_check against the real server. Open and refused on loopback; filtered, unreachable,
// unresolved and policy-denied from inside a network namespace this test builds, where every address
// is ours, the resolver is a loopback port nobody listens on, and nothing can leave for the outside.
import { once } from "node:events";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type RoadNerdClient } from "@roadnerd/client";
import type { ResultOf } from "@roadnerd/conventions";
import {
  CLOSED_PORT,
  createNetnsLab,
  type NetnsLab,
  netnsSkipReason,
  type SpawnedServer,
  spawnServer,
} from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { tcpPortCheck } from "../../src/tools/tcp-port-check.ts";

type PortCheck = ResultOf<typeof tcpPortCheck>;

async function listen(host: string): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => socket.destroy());
  server.listen(0, host);
  await once(server, "listening");
  return { server, port: (server.address() as { port: number }).port };
}

async function rejection(promise: Promise<unknown>): Promise<{ code?: string; status?: number }> {
  try {
    await promise;
  } catch (err) {
    return err as { code?: string; status?: number };
  }
  throw new Error("expected the call to fail");
}

describe("tcp_port_check on loopback", () => {
  let server: SpawnedServer | undefined;
  let client: RoadNerdClient;
  let target: Server | undefined;

  beforeAll(async () => {
    server = await spawnServer("network");
    client = createClient(server.url);
  });

  afterAll(async () => {
    target?.close();
    await server?.stop();
  });

  it("open: a listening port completes the handshake", async () => {
    const listening = await listen("127.0.0.1");
    target = listening.server;
    const res = await client.call<PortCheck>("tcp_port_check", { host: "127.0.0.1", port: listening.port });
    expect(res).toMatchObject({
      host: "127.0.0.1",
      port: listening.port,
      open: true,
      state: "open",
      address: "127.0.0.1",
    });
    expect(res.connect_ms).toBeGreaterThanOrEqual(0);
    expect(res.error).toBeUndefined();
    expect(res.summary).toMatch(/^127\.0\.0\.1:\d+ is open \(\d+ ms\)$/);
  });

  it("refused: a closed port is a 200 result with E_CONN_REFUSED, not an error", async () => {
    const port = CLOSED_PORT;
    const res = await client.call<PortCheck>("tcp_port_check", { host: "127.0.0.1", port });
    expect(res).toMatchObject({ open: false, state: "refused", error: "E_CONN_REFUSED", address: "127.0.0.1" });
    expect(res.detail).toBe(`connection refused (ECONNREFUSED, address 127.0.0.1:${port})`);
    expect(res.summary).toBe(`127.0.0.1:${port} is closed: connection refused`);
  });

  it("a server is never aimed at itself: its own address and port are refused (any loopback spelling)", async () => {
    const own = Number(new URL(server?.url ?? "").port);
    for (const host of ["127.0.0.1", "::ffff:127.0.0.1", "localhost"]) {
      expect(await rejection(client.call("tcp_port_check", { host, port: own }))).toMatchObject({
        code: "E_FORBIDDEN",
        status: 403,
      });
    }
    const url = `http://127.0.0.1:${own}/healthz`;
    expect(await rejection(client.call("http_check", { url }))).toMatchObject({ code: "E_FORBIDDEN" });
  });

  it("OUTBOUND_ALLOW_SELF=1 allows it", async () => {
    const selfish = await spawnServer("network", { env: { OUTBOUND_ALLOW_SELF: "1" } });
    try {
      const own = Number(new URL(selfish.url).port);
      const res = await createClient(selfish.url).call<PortCheck>("tcp_port_check", { host: "127.0.0.1", port: own });
      expect(res.open).toBe(true);
    } finally {
      await selfish.stop();
    }
  });

  it("bad input is a typed 400 before anything is sent", async () => {
    for (const input of [{ host: "127.0.0.1", port: 0 }, { host: "-oProxy", port: 80 }, { host: "127.0.0.1" }]) {
      expect(await rejection(client.call("tcp_port_check", input))).toMatchObject({
        code: "E_INVALID_INPUT",
        status: 400,
      });
    }
  });
});

const skip = netnsSkipReason();

describe.skipIf(skip)(`tcp_port_check in a network namespace${skip ? ` (skipped: ${skip})` : ""}`, () => {
  let lab: NetnsLab;
  let host: string;
  let open: SpawnedServer | undefined;
  let restricted: SpawnedServer | undefined;
  let client: RoadNerdClient;
  let rootListener: { server: Server; port: number } | undefined;
  let rootAddr: string;
  const check = (input: Record<string, unknown>) => client.call<PortCheck>("tcp_port_check", input);

  beforeAll(async () => {
    lab = createNetnsLab();
    try {
      host = lab.addNs();
      const peer = lab.addNs();
      const link = lab.linkToRoot(host);
      rootAddr = link.rootAddr;
      lab.veth(
        { ns: host, name: "tgt0", addrs: ["198.51.100.2/24"], ipv6: "off" },
        { ns: peer, name: "tgt0p", addrs: ["198.51.100.1/24"], ipv6: "off" },
      );
      // Frames for .77 go to a MAC nobody has: the SYN leaves and nothing ever answers.
      lab.silentNeighbour(host, "tgt0", "198.51.100.77");
      lab.ip(host, "route", "add", "unreachable", "203.0.113.0/24");
      lab.ip(host, "route", "add", "blackhole", "10.66.0.0/16");
      // Names: /etc/hosts first, then a resolver on the namespace's own loopback where nothing listens.
      lab.etcFile(host, "nsswitch.conf", "hosts: files dns\n");
      lab.etcFile(host, "hosts", "127.0.0.1 localhost\n198.51.100.1 router.rn.test\n");
      lab.etcFile(host, "resolv.conf", "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n");
      // Processes started with `ip netns exec` must see our files, or a lookup could reach the real resolver.
      expect(lab.exec(host, ["cat", "/etc/resolv.conf"])).toBe("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n");
      rootListener = await listen(rootAddr);
      const env = { HOST: link.nsAddr };
      open = await lab.serve(host, "network", { env });
      restricted = await lab.serve(host, "network", { env: { ...env, OUTBOUND_ALLOW: "127.0.0.0/8" } });
      client = createClient(open.url, { token: open.token });
    } catch (err) {
      await lab.cleanup();
      throw err;
    }
  });

  afterAll(async () => {
    rootListener?.server.close();
    await lab?.cleanup();
  });

  it("open across a real link", async () => {
    const res = await check({ host: rootAddr, port: rootListener?.port });
    expect(res).toMatchObject({ open: true, state: "open", address: rootAddr });
  });

  it("refused by a host on the link, also when asked by name (resolved from /etc/hosts, pinned)", async () => {
    const byIp = await check({ host: "198.51.100.1", port: 9 });
    expect(byIp).toMatchObject({ open: false, state: "refused", error: "E_CONN_REFUSED" });
    const byName = await check({ host: "router.rn.test", port: 9 });
    expect(byName).toMatchObject({ host: "router.rn.test", state: "refused", address: "198.51.100.1" });
  });

  it("filtered: no answer is E_TIMEOUT within the deadline, and the socket is gone afterwards", async () => {
    const started = performance.now();
    const res = await check({ host: "198.51.100.77", port: 80, timeout_ms: 800 });
    const elapsed = performance.now() - started;
    expect(res).toMatchObject({ open: false, state: "filtered", error: "E_TIMEOUT", address: "198.51.100.77" });
    // Within the deadline: the tool's own wait is the call's timeout less the kernel's margin, and it answers
    // long before the kernel's SYN retries would give up (minutes); the upper bound leaves a loaded machine room.
    const waited = /^filtered: no answer within (\d+) ms \(address 198\.51\.100\.77:80\)$/.exec(res.detail ?? "");
    expect(Number(waited?.[1])).toBeGreaterThan(0);
    expect(Number(waited?.[1])).toBeLessThanOrEqual(800);
    expect(res.connect_ms).toBeUndefined();
    expect(elapsed).toBeGreaterThan(500);
    expect(elapsed).toBeLessThan(15_000);
    expect(lab.exec(host, ["ss", "-tanH", "state", "syn-sent"]).trim()).toBe("");
  });

  it("unreachable: an unreachable route, no route at all, a blackhole", async () => {
    const cases: Array<[string, RegExp]> = [
      ["203.0.113.5", /^no route to host \(EHOSTUNREACH, address 203\.0\.113\.5:80\)$/],
      ["192.0.2.99", /^network unreachable \(ENETUNREACH, address 192\.0\.2\.99:80\)$/],
      ["10.66.0.1", /^blackhole route \(EINVAL, address 10\.66\.0\.1:80\)$/],
    ];
    for (const [ip, detail] of cases) {
      const res = await check({ host: ip, port: 80 });
      expect(res).toMatchObject({ open: false, state: "unreachable", error: "E_UNREACHABLE", address: ip });
      expect(res.detail).toMatch(detail);
    }
  });

  it("unresolved: a name the resolver cannot answer is E_DNS_FAIL as a result", async () => {
    // nscd would answer from the root namespace, through the machine's resolver: never let that happen.
    if (["/run/nscd/socket", "/var/run/nscd/socket"].some(existsSync))
      throw new Error("nscd is running: this lookup could leave the namespace");
    const res = await check({ host: "no-such-host.invalid", port: 80 });
    expect(res).toMatchObject({ open: false, state: "unresolved", error: "E_DNS_FAIL" });
    expect(res.detail).toMatch(/^no-such-host\.invalid did not resolve \(E[A-Z_]+\)$/);
    expect(res.address).toBeUndefined();
  });

  it("denied by OUTBOUND_ALLOW: 403 E_FORBIDDEN and not one packet sent", async () => {
    const denied = createClient(restricted?.url ?? "", { token: restricted?.token });
    const before = lab.txPackets(host, "tgt0");
    for (const target of ["198.51.100.77", "198.51.100.1", "router.rn.test"]) {
      const err = await rejection(denied.call("tcp_port_check", { host: target, port: 80 }));
      expect(err).toMatchObject({ code: "E_FORBIDDEN", status: 403 });
    }
    expect(lab.txPackets(host, "tgt0")).toBe(before);
  });
});

describe.skipIf(skip)("a name with several addresses is tried address by address, as curl does", () => {
  let dir: string;
  let server: SpawnedServer | undefined;
  let listener: Server | undefined;
  let port = 0;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "rn-dual-"));
    // /etc/hosts as Debian ships it for localhost: ::1 answers first, the service listens on 127.0.0.1 only.
    await writeFile(join(dir, "hosts"), "::1 dual.test\n127.0.0.1 dual.test\n");
    ({ server: listener, port } = await listen("127.0.0.1"));
    server = await spawnServer("network", {
      // A private mount namespace for the server alone, so its /etc/hosts is ours.
      wrap: ["unshare", "-m", "sh", "-c", `mount --bind ${join(dir, "hosts")} /etc/hosts && exec "$@"`, "sh"],
    });
  });
  afterAll(async () => {
    listener?.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("tcp_port_check: refused on ::1, open on 127.0.0.1 → open", async () => {
    const res = await createClient(server?.url ?? "").call<PortCheck>("tcp_port_check", { host: "dual.test", port });
    expect(res).toMatchObject({ open: true, state: "open", address: "127.0.0.1" });
  });

  it("http_check: the answer a browser gets, from the second address", async () => {
    const web = createHttpServer((_req, res) => res.end("hi"));
    await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
    try {
      const port = (web.address() as AddressInfo).port;
      const res = await createClient(server?.url ?? "").call<{ status: number | null; error?: string }>("http_check", {
        url: `http://dual.test:${port}/`,
      });
      expect(res).toMatchObject({ status: 200 });
      expect(res.error).toBeUndefined();
    } finally {
      web.close();
    }
  });

  it("closed on both: refused, and the detail says both were tried", async () => {
    const res = await createClient(server?.url ?? "").call<PortCheck>("tcp_port_check", {
      host: "dual.test",
      port: CLOSED_PORT,
    });
    expect(res).toMatchObject({ open: false, state: "refused" });
    expect(res.detail).toMatch(/also tried ::1/);
  });
});
