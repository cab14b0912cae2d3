/**
 * NetworkDiag's per-tool latency against the command a user would type, measured the same way in the same run:
 * `ip` for the host tools, `dig`, `nc -z` (or bash's /dev/tcp) and `curl` for the probes; the in-process floor
 * (a raw UDP query, net.connect, fetch) as a second, informational line. Everything on loopback (a DNS server on
 * 127.53.99.1:53, a web server, a TCP listener). Used by `pnpm bench`.
 */
import { createSocket } from "node:dgram";
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, connect, createServer as createTcpServer } from "node:net";
import { testExec } from "@roadnerd/conventions/testing";
import { type BenchCall, type BenchContext, startDnsServer } from "@roadnerd/testkit";
import dnsPacket from "dns-packet";
import { ipAddrShow } from "../src/tools/iface-info.ts";
import { ipRoutes } from "../src/tools/route-info.ts";

// The very commands the tools declare, through the kernel's exec: the baseline is `ip` itself, spawned the same way.
const exec = testExec([ipAddrShow, ipRoutes[4], ipRoutes[6]]);
const EXEC_OPTIONS = { timeoutMs: 5_000 };

function udpQuery(host: string, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const sock = createSocket("udp4");
    sock.once("message", () => {
      sock.close();
      resolve();
    });
    sock.once("error", reject);
    sock.send(
      dnsPacket.encode({ type: "query", id: 1, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: "A", name }] }),
      53,
      host,
    );
  });
}

export async function benchLatency(b: BenchContext): Promise<void> {
  const web = createHttpServer((req, res) => {
    if (req.url === "/generate_204") return void res.writeHead(204).end();
    res.writeHead(200, { "content-type": "text/plain" }).end("ok");
  });
  await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
  const webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  const tcp = createTcpServer((s) => s.destroy());
  await new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r));
  const tcpPort = (tcp.address() as AddressInfo).port;
  const dns = await startDnsServer({
    host: "127.53.99.1",
    port: 53,
    records: [{ name: "bench.test", type: "A", ttl: 60, data: "192.0.2.7" }],
  });
  // Every default that would reach out points at loopback: the captive probes and the test URL.
  const srv = await b.start({
    CAPTIVE_TEST_URL: `${webUrl}/`,
    CAPTIVE_PROBES: JSON.stringify([{ url: `${webUrl}/generate_204`, expect: 204 }]),
    OUTBOUND_ALLOW: "127.0.0.0/8",
  });
  try {
    await b.pair(
      "iface_info",
      () => b.call(srv, "iface_info", {}),
      "ip -j addr show",
      () => exec(ipAddrShow, undefined, EXEC_OPTIONS),
    );
    await b.pair(
      "route_info",
      () => b.call(srv, "route_info", {}),
      "ip -j -4/-6 route (parallel)",
      () => Promise.all([exec(ipRoutes[4], undefined, EXEC_OPTIONS), exec(ipRoutes[6], undefined, EXEC_OPTIONS)]),
    );
    const dnsResolve = () => b.call(srv, "dns_resolve", { qname: "bench.test", server: dns.host });
    await b.pairCommand("dns_resolve", dnsResolve, ["dig", `@${dns.host}`, "-p", "53", "+tries=1", "bench.test", "A"]);
    await b.pair("dns_resolve", dnsResolve, "one UDP query (dns-packet)", () => udpQuery(dns.host, "bench.test"), {
      floor: true,
    });
    const tcpCheck = () => b.call(srv, "tcp_port_check", { host: "127.0.0.1", port: tcpPort });
    await b.pairCommand("tcp_port_check", tcpCheck, ["nc", "-z", "127.0.0.1", String(tcpPort)], {
      alt: ["bash", "-c", `exec 3<>/dev/tcp/127.0.0.1/${tcpPort}`],
    });
    await b.pair(
      "tcp_port_check",
      tcpCheck,
      "net.connect",
      () =>
        new Promise<void>((resolve, reject) => {
          const s = connect(tcpPort, "127.0.0.1", () => {
            s.destroy();
            resolve();
          });
          s.once("error", reject);
        }),
      { floor: true },
    );
    const curl = (url: string) => ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", url];
    const httpCheck = () => b.call(srv, "http_check", { url: `${webUrl}/` });
    await b.pairCommand("http_check", httpCheck, curl(`${webUrl}/`));
    await b.pair("http_check", httpCheck, "fetch GET", async () => (await fetch(`${webUrl}/`)).arrayBuffer(), {
      floor: true,
    });
    const captive = () => b.call(srv, "captive_portal_check", { test_url: `${webUrl}/generate_204` });
    await b.pairCommand("captive_portal_check", captive, curl(`${webUrl}/generate_204`));
    await b.pair(
      "captive_portal_check",
      captive,
      "fetch GET of the probe",
      async () => (await fetch(`${webUrl}/generate_204`)).arrayBuffer(),
      { floor: true },
    );
    // Information: what the framework and the kernel's hooks add to HTTP itself (target 5 holds /healthz to the
    // bare fastify+zod bundle, in section 2; nothing is faster than node:http answering "hello").
    await b.pair(
      "healthz (no tool)",
      () => b.floor(srv),
      "node:http hello",
      async () => (await fetch(`${webUrl}/`)).arrayBuffer(),
      { floor: true },
    );
  } finally {
    srv.kill();
    web.close();
    tcp.close();
    await dns.close();
  }
}

/** A cheap call for the /mcp vs /actions comparison: a TCP check of a local listener. */
export async function cheapCall(): Promise<BenchCall> {
  const tcp = createTcpServer((s) => s.destroy());
  await new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r));
  return {
    tool: "tcp_port_check",
    args: { host: "127.0.0.1", port: (tcp.address() as AddressInfo).port },
    close: () => tcp.close(),
  };
}
