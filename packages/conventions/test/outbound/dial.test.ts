/**
 * The kernel's one dial against real sockets on loopback: pinning to the checked address, the next address after
 * a refusal, the policy's refusal before any connection (listeners count what they accept), TLS facts and SNI
 * against servers with generated certificates, CONNECT through a local proxy, and aborts. Names are answered by
 * a fake resolver (node:dns/promises is mocked); node:net's connect is wrapped to log what was dialled.
 */
import { createSocket as createUdpSocket } from "node:dgram";
import { once } from "node:events";
import { createServer as createHttpServer, type IncomingMessage } from "node:http";
import { type AddressInfo, createConnection, createServer, type Server, type Socket } from "node:net";
import { createSecureContext, createServer as createTlsServer, type TLSSocket } from "node:tls";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { CLOSED_PORT, generateTestCerts, type KeyCert, type TestCerts } from "../../../testkit/src/index.ts";
import { dial } from "../../src/outbound/dial.ts";
import { DialError } from "../../src/outbound/dial-error.ts";
import { dialUdp } from "../../src/outbound/dial-udp.ts";
import { createOutboundPolicy, type OutboundPolicy } from "../../src/outbound/index.ts";

const FAKE_DNS: Record<string, string[]> = {
  "pin.test": ["127.0.0.1"],
  "two.test": ["127.0.0.2", "127.0.0.1"],
  "mixed.test": ["127.0.0.1", "169.254.169.254"],
  "localhost.test": ["127.0.0.1"],
};

/** What happened, in order: lookups, policy checks, connects. */
const log = vi.hoisted(() => [] as string[]);

vi.mock("node:dns/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:dns/promises")>();
  const lookup = async (name: string) => {
    log.push(`lookup ${name}`);
    const addresses = FAKE_DNS[name];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return { ...actual, lookup, default: { ...actual, lookup } };
});

vi.mock("node:net", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:net")>();
  const connect = (...args: Parameters<typeof actual.connect>) => {
    log.push(`connect ${(args[0] as { host?: string }).host}`);
    return actual.connect(...args);
  };
  return { ...actual, connect, default: { ...actual, connect } };
});

/** The policy, with every address check logged: the check must come right before its connect. */
function logged(policy: OutboundPolicy): OutboundPolicy {
  return {
    ...policy,
    checkAddress(ip, host, port) {
      log.push(`check ${ip}`);
      policy.checkAddress(ip, host, port);
    },
  };
}

const open = () => logged(createOutboundPolicy({ allow: [], deny: [] }));
const signal = () => new AbortController().signal;

/** A TCP listener that counts what it accepts and keeps it open until closed. */
interface Listener {
  port: number;
  accepted(): number;
  sockets: Socket[];
  close(): Promise<void>;
}

async function listen(server: Server = createServer(), onAccept?: (s: Socket) => void): Promise<Listener> {
  const sockets: Socket[] = [];
  server.on("connection", (s: Socket) => {
    sockets.push(s);
    s.on("error", () => {});
    onAccept?.(s);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    port: (server.address() as AddressInfo).port,
    accepted: () => sockets.length,
    sockets,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** A TLS server that records the SNI each client sent (false: none) and answers ALPN. */
async function tlsListener(cert: KeyCert): Promise<Listener & { sni: Array<string | false> }> {
  const sni: Array<string | false> = [];
  const server = createTlsServer({ ...cert, ALPNProtocols: ["h2", "http/1.1"] });
  server.on("secureConnection", (s: TLSSocket) => {
    sni.push(s.servername ?? false);
    s.on("error", () => {});
  });
  server.on("tlsClientError", () => {});
  return { ...(await listen(server)), sni };
}

/**
 * A forward proxy for CONNECT only. It "resolves" every target to 127.0.0.1 itself (as a real proxy resolves
 * what it is asked), wants `auth` when given, and records each request line with its Proxy-Authorization.
 */
async function connectProxy(auth?: string): Promise<Listener & { seen: string[] }> {
  const seen: string[] = [];
  const server = createHttpServer();
  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    seen.push(`CONNECT ${req.url} ${req.headers["proxy-authorization"] ?? "-"}`);
    client.on("error", () => {});
    if (auth && req.headers["proxy-authorization"] !== auth) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="t"\r\n\r\n');
      return;
    }
    const port = Number(new URL(`http://${req.url}`).port);
    const upstream = createConnection({ host: "127.0.0.1", port });
    upstream.on("error", () => client.destroy());
    upstream.once("connect", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
  });
  return { ...(await listen(server)), seen };
}

let certs: TestCerts;
let plain: Listener;
let selfSigned: Awaited<ReturnType<typeof tlsListener>>;
let valid: Awaited<ReturnType<typeof tlsListener>>;
let wrongName: Awaited<ReturnType<typeof tlsListener>>;

beforeAll(async () => {
  certs = await generateTestCerts(["localhost.test", "tunnel.test"]);
  plain = await listen();
  selfSigned = await tlsListener(certs.selfSigned);
  valid = await tlsListener(certs.valid);
  wrongName = await tlsListener(certs.wrongName);
});
afterAll(async () => {
  for (const l of [plain, selfSigned, valid, wrongName]) await l?.close();
  await certs?.cleanup();
});
beforeEach(() => {
  log.length = 0;
});

async function dialError(p: Promise<unknown>): Promise<DialError> {
  const err = await p.then(
    () => new Error("expected the dial to fail"),
    (e: unknown) => e,
  );
  if (!(err instanceof DialError)) throw err;
  return err;
}

describe("dial: resolve, check, connect, pin", () => {
  it("a name: one lookup, each address checked right before its connect, the socket pinned to it", async () => {
    const before = plain.accepted();
    const d = await dial(open(), { host: "pin.test", port: plain.port, signal: signal() });
    try {
      expect(log).toEqual(["lookup pin.test", "check 127.0.0.1", "connect 127.0.0.1"]);
      expect(d.address).toBe("127.0.0.1");
      expect(d.socket.remoteAddress).toBe("127.0.0.1");
      expect(d.socket.remotePort).toBe(plain.port);
      expect(d.attempts).toMatchObject([{ address: "127.0.0.1" }]);
      expect(d.tls).toBeNull();
      expect(d.timing).toMatchObject({ tls: 0, ttfb: 0 });
      expect(d.timing.total).toBeGreaterThanOrEqual(d.timing.connect);
      expect(d.timing).not.toHaveProperty("tunnel");
      await expect.poll(() => plain.accepted()).toBe(before + 1);
    } finally {
      d.socket.destroy();
    }
  });

  it("an IP literal (any spelling) is dialled as the address it is, with no lookup", async () => {
    for (const host of ["127.1", "[::ffff:127.0.0.1]", "0x7f000001"]) {
      log.length = 0;
      const d = await dial(open(), { host, port: plain.port, signal: signal() });
      d.socket.destroy();
      expect(log.filter((l) => l.startsWith("lookup"))).toEqual([]);
      expect(log.at(-1)).toMatch(/^connect (127\.0\.0\.1|::ffff:127\.0\.0\.1)$/);
      expect(d.timing.dns).toBe(0);
    }
  });

  it("a refused address gives way to the next, in the resolver's order", async () => {
    // Nothing listens on 127.0.0.2 at this port: refused; 127.0.0.1 answers.
    const d = await dial(open(), { host: "two.test", port: plain.port, signal: signal() });
    d.socket.destroy();
    expect(log).toEqual([
      "lookup two.test",
      "check 127.0.0.2",
      "connect 127.0.0.2",
      "check 127.0.0.1",
      "connect 127.0.0.1",
    ]);
    expect(d.address).toBe("127.0.0.1");
    expect(d.attempts).toMatchObject([
      { address: "127.0.0.2", failure: { kind: "refused", errno: "ECONNREFUSED" } },
      { address: "127.0.0.1" },
    ]);
    expect(d.attempts[1]?.failure).toBeUndefined();
  });

  it("refused everywhere: E_CONN_REFUSED in the connect phase, every address tried, the last named", async () => {
    const err = await dialError(dial(open(), { host: "two.test", port: CLOSED_PORT, signal: signal() }));
    expect(err).toMatchObject({ code: "E_CONN_REFUSED", phase: "connect", errno: "ECONNREFUSED" });
    expect(err.message).toBe(`connection refused (ECONNREFUSED, address 127.0.0.1:${CLOSED_PORT})`);
    expect(err.attempts.map((a) => a.address)).toEqual(["127.0.0.2", "127.0.0.1"]);
  });

  it("a name that does not resolve is E_DNS_FAIL in the dns phase, nothing dialled", async () => {
    const err = await dialError(dial(open(), { host: "nx.test", port: plain.port, signal: signal() }));
    expect(err).toMatchObject({ code: "E_DNS_FAIL", phase: "dns", message: "nx.test did not resolve (ENOTFOUND)" });
    expect(err.attempts).toEqual([]);
    expect(log).toEqual(["lookup nx.test"]);
  });
});

describe("dial: the policy refuses before any connection", () => {
  const denied = { code: "E_FORBIDDEN" };

  it("a denied literal: E_FORBIDDEN, no lookup, no connect, nothing accepted", async () => {
    const before = plain.accepted();
    const deny = logged(createOutboundPolicy({ allow: [], deny: ["127.0.0.0/8"] }));
    for (const host of ["127.0.0.1", "127.1", "[::ffff:7f00:1]"]) {
      await expect(dial(deny, { host, port: plain.port, signal: signal() })).rejects.toMatchObject(denied);
    }
    expect(log.filter((l) => !l.startsWith("check"))).toEqual([]);
    expect(plain.accepted()).toBe(before);
  });

  it("one denied address among several refuses the name before its first (allowed) address is dialled", async () => {
    const before = plain.accepted();
    const err = await dial(open(), { host: "mixed.test", port: plain.port, signal: signal() }).catch((e) => e);
    expect(err).toMatchObject({ code: "E_FORBIDDEN", message: expect.stringContaining("169.254.169.254") });
    expect(err).not.toBeInstanceOf(DialError);
    expect(log).toEqual(["lookup mixed.test"]);
    expect(plain.accepted()).toBe(before);
  });

  it("the server's own address and port are refused (setSelf)", async () => {
    const policy = createOutboundPolicy({ allow: [], deny: [] });
    policy.setSelf("127.0.0.1", plain.port);
    const before = plain.accepted();
    await expect(dial(policy, { host: "pin.test", port: plain.port, signal: signal() })).rejects.toMatchObject({
      code: "E_FORBIDDEN",
      message: expect.stringContaining("this server itself"),
    });
    expect(plain.accepted()).toBe(before);
  });

  it("through a proxy: a denied target is refused before the proxy is dialled", async () => {
    const proxy = await connectProxy();
    try {
      for (const host of ["169.254.169.254", "[::ffff:a9fe:a9fe]", "metadata.google.internal", "0xa9fea9fe"]) {
        await expect(
          dial(open(), { host, port: 80, signal: signal(), proxy: { host: "127.0.0.1", port: proxy.port } }),
        ).rejects.toMatchObject(denied);
      }
      // An allowlist-only policy refuses the proxy hop too, when the list does not name it.
      const only = createOutboundPolicy({ allow: ["tunnel.test"], deny: [], allowlistOnly: "demo" });
      await expect(
        dial(only, {
          host: "tunnel.test",
          port: 443,
          signal: signal(),
          proxy: { host: "127.0.0.1", port: proxy.port },
        }),
      ).rejects.toMatchObject({ code: "E_FORBIDDEN", message: expect.stringContaining("127.0.0.1") });
      expect(proxy.accepted()).toBe(0);
      expect(log.filter((l) => l.startsWith("connect") || l.startsWith("lookup"))).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});

describe("dial: TLS, reported instead of refused", () => {
  it("a self-signed certificate by name: SNI is the name, facts say why a browser would refuse", async () => {
    const before = selfSigned.sni.length;
    const d = await dial(open(), { host: "localhost.test", port: selfSigned.port, signal: signal(), tls: {} });
    // The server's side of the handshake ends with our Finished: wait for it before closing.
    await expect.poll(() => selfSigned.sni.length).toBe(before + 1);
    d.socket.destroy();
    expect(selfSigned.sni.at(-1)).toBe("localhost.test");
    expect(d.tls).toMatchObject({
      authorized: false,
      authorizationError: "DEPTH_ZERO_SELF_SIGNED_CERT",
      hostnameOk: true,
      nameError: null,
      alpn: "http/1.1",
      protocol: "TLSv1.3",
    });
    expect(d.tls.certExpiryDays).toBeGreaterThan(0);
    expect(d.timing.tls).toBeGreaterThan(0);
    expect(d.socket.encrypted).toBe(true);
  });

  it("an IP literal is never sent as SNI; the certificate is still checked against it", async () => {
    const before = selfSigned.sni.length;
    const d = await dial(open(), { host: "127.0.0.1", port: selfSigned.port, signal: signal(), tls: {} });
    await expect.poll(() => selfSigned.sni.length).toBe(before + 1);
    d.socket.destroy();
    expect(selfSigned.sni.at(-1)).toBe(false);
    expect(d.tls.hostnameOk).toBe(true);
  });

  it("ALPN offers what it is asked to; a trusted CA verifies the chain", async () => {
    const secureContext = createSecureContext({ ca: certs.ca.cert });
    const d = await dial(open(), {
      host: "localhost.test",
      port: valid.port,
      signal: signal(),
      tls: { alpn: ["h2", "http/1.1"], secureContext },
    });
    d.socket.destroy();
    expect(d.tls).toMatchObject({ authorized: true, authorizationError: null, alpn: "h2", issuer: "RoadNerd Test CA" });
  });

  it("a wrong name: a browser's verdict by default, the chain alone with nameInVerdict false", async () => {
    const secureContext = createSecureContext({ ca: certs.ca.cert });
    const browser = await dial(open(), {
      host: "pin.test",
      port: wrongName.port,
      signal: signal(),
      tls: { secureContext },
    });
    browser.socket.destroy();
    expect(browser.tls).toMatchObject({ authorized: false, authorizationError: "ERR_TLS_CERT_ALTNAME_INVALID" });
    const chain = await dial(open(), {
      host: "pin.test",
      port: wrongName.port,
      signal: signal(),
      tls: { secureContext, nameInVerdict: false },
    });
    chain.socket.destroy();
    expect(chain.tls).toMatchObject({ authorized: true, hostnameOk: false });
    expect(chain.tls.nameError).toContain("wrong.example");
  });

  it("TLS spoken to a port that answers something else: E_TLS in the tls phase", async () => {
    const other = await listen(createServer((s) => s.end("SSH-2.0-OpenSSH_9.6\r\n")));
    try {
      const err = await dialError(dial(open(), { host: "127.0.0.1", port: other.port, signal: signal(), tls: {} }));
      expect(err).toMatchObject({ code: "E_TLS", phase: "tls", where: `127.0.0.1:${other.port}` });
      expect(err.message).toMatch(/^TLS handshake failed: .*address 127\.0\.0\.1:\d+\)$/);
      expect(err.timing.tls).toBe(0);
    } finally {
      await other.close();
    }
  });
});

describe("dial: through an HTTP proxy", () => {
  it("CONNECT with the proxy's credentials, then TLS with the target inside the tunnel", async () => {
    const proxy = await connectProxy("Basic dTpw");
    try {
      const d = await dial(open(), {
        host: "tunnel.test",
        port: valid.port,
        signal: signal(),
        tls: { secureContext: createSecureContext({ ca: certs.ca.cert }) },
        proxy: { host: "127.0.0.1", port: proxy.port, headers: { "proxy-authorization": "Basic dTpw" } },
      });
      await expect.poll(() => valid.sni.at(-1)).toBe("tunnel.test");
      d.socket.destroy();
      expect(proxy.seen).toEqual([`CONNECT tunnel.test:${valid.port} Basic dTpw`]);
      // The proxy resolves the target: we looked nothing up and dialled only the proxy.
      expect(log).toEqual(["check 127.0.0.1", "connect 127.0.0.1"]);
      expect(d.address).toBe("127.0.0.1");
      expect(d.tls).toMatchObject({ authorized: true, hostnameOk: true });
      expect(d.timing).toMatchObject({ connect: 0 });
      expect(d.timing.tunnel).toBeGreaterThan(0);
      expect(d.timing.proxy_connect).toBeGreaterThanOrEqual(0);
    } finally {
      await proxy.close();
    }
  });

  it("a proxy that wants credentials: E_CONN_REFUSED in the tunnel phase, with its status and scheme", async () => {
    const proxy = await connectProxy("Basic dTpw");
    try {
      const err = await dialError(
        dial(open(), {
          host: "tunnel.test",
          port: 443,
          signal: signal(),
          proxy: { host: "127.0.0.1", port: proxy.port },
        }),
      );
      expect(err).toMatchObject({
        code: "E_CONN_REFUSED",
        phase: "tunnel",
        proxyStatus: 407,
        proxyAuthenticate: 'Basic realm="t"',
        message: 'the proxy wants credentials (Basic realm="t")',
      });
    } finally {
      await proxy.close();
    }
  });

  it("tunnel false stops at the proxy; a dead proxy is E_CONN_REFUSED in proxy_connect, naming it", async () => {
    const proxy = await connectProxy();
    try {
      const d = await dial(open(), {
        host: "tunnel.test",
        port: 80,
        signal: signal(),
        proxy: { host: "127.0.0.1", port: proxy.port, tunnel: false },
      });
      const remote = d.socket.remotePort;
      d.socket.destroy();
      expect(remote).toBe(proxy.port);
      expect(proxy.seen).toEqual([]);
      expect(d.timing).toMatchObject({ tunnel: 0, connect: 0 });
    } finally {
      await proxy.close();
    }
    const err = await dialError(
      dial(open(), {
        host: "tunnel.test",
        port: 80,
        signal: signal(),
        proxy: { host: "127.0.0.1", port: CLOSED_PORT },
      }),
    );
    expect(err).toMatchObject({ code: "E_CONN_REFUSED", phase: "proxy_connect", where: `127.0.0.1:${CLOSED_PORT}` });
  });
});

describe("dialUdp: a datagram socket connected to the checked address", () => {
  it("checks, connects, and hears the answer only from that address", async () => {
    const echo = createUdpSocket("udp4");
    echo.on("message", (msg, from) => echo.send(msg, from.port, from.address));
    await new Promise<void>((r) => echo.bind(0, "127.0.0.1", () => r()));
    try {
      const d = await dialUdp(open(), { host: "pin.test", port: echo.address().port, signal: signal() });
      try {
        expect(log).toEqual(["lookup pin.test", "check 127.0.0.1"]);
        expect(d.address).toBe("127.0.0.1");
        expect(d.socket.remoteAddress()).toMatchObject({ address: "127.0.0.1", port: echo.address().port });
        const answer = once(d.socket, "message");
        d.socket.send("ping");
        expect(String((await answer)[0])).toBe("ping");
      } finally {
        d.socket.close();
      }
    } finally {
      echo.close();
    }
  });

  it("a denied address is E_FORBIDDEN before any socket exists", async () => {
    const deny = createOutboundPolicy({ allow: [], deny: ["127.0.0.0/8"] });
    await expect(dialUdp(deny, { host: "127.0.0.1", port: 53, signal: signal() })).rejects.toMatchObject({
      code: "E_FORBIDDEN",
    });
  });

  it("no route is a diagnosis in the connect phase (a sealed run has only loopback)", async () => {
    const err = await dialError(dialUdp(open(), { host: "192.0.2.53", port: 53, signal: signal() }));
    expect(err).toMatchObject({ code: "E_UNREACHABLE", phase: "connect", errno: "ENETUNREACH" });
  });
});

describe("dial: aborts", () => {
  it("an aborted signal ends the dial before anything is looked up or dialled", async () => {
    const controller = new AbortController();
    controller.abort();
    const err = await dialError(dial(open(), { host: "pin.test", port: plain.port, signal: controller.signal }));
    expect(err).toMatchObject({ code: "E_TIMEOUT", phase: "dns" });
    expect(log).toEqual([]);
  });

  it("aborted mid-handshake: E_TIMEOUT in the tls phase, and the connection is closed", async () => {
    // Accepts and never speaks: the handshake can only wait. The abort comes with the ClientHello.
    const controller = new AbortController();
    const silent = await listen(createServer(), (s) => s.once("data", () => controller.abort()));
    try {
      const err = await dialError(
        dial(open(), { host: "127.0.0.1", port: silent.port, signal: controller.signal, tls: {} }),
      );
      expect(err).toMatchObject({ code: "E_TIMEOUT", phase: "tls", where: `127.0.0.1:${silent.port}` });
      const [accepted] = silent.sockets;
      if (!accepted) throw new Error("the server saw no connection");
      // Our end is destroyed: the server's end reads its end.
      if (!accepted.readableEnded) await once(accepted, "end");
      expect(accepted.readableEnded).toBe(true);
    } finally {
      await silent.close();
    }
  });

  it("timeoutMs bounds the dial on its own", async () => {
    const silent = await listen();
    try {
      const err = await dialError(
        dial(open(), { host: "127.0.0.1", port: silent.port, signal: signal(), tls: {}, timeoutMs: 100 }),
      );
      expect(err).toMatchObject({ code: "E_TIMEOUT", phase: "tls" });
      expect(err.attempts).toMatchObject([{ address: "127.0.0.1", limitMs: expect.any(Number) }]);
    } finally {
      await silent.close();
    }
  });
});
