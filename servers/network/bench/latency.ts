/**
 * NetworkDiag's per-tool latency against the data source underneath, measured the same way in the same
 * run: `ip` for the host tools, a raw UDP query, net.connect and undici for the probes. Everything on
 * loopback (a DNS server on 127.53.99.1:53, a web server, a TCP listener). Used by `pnpm bench`.
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
    await b.pair(
      "dns_resolve",
      () => b.call(srv, "dns_resolve", { qname: "bench.test", server: dns.host }),
      "one UDP query (dns-packet)",
      () => udpQuery(dns.host, "bench.test"),
    );
    await b.pair(
      "tcp_port_check",
      () => b.call(srv, "tcp_port_check", { host: "127.0.0.1", port: tcpPort }),
      "net.connect",
      () =>
        new Promise<void>((resolve, reject) => {
          const s = connect(tcpPort, "127.0.0.1", () => {
            s.destroy();
            resolve();
          });
          s.once("error", reject);
        }),
    );
    await b.pair(
      "http_check",
      () => b.call(srv, "http_check", { url: `${webUrl}/` }),
      "fetch GET",
      async () => (await fetch(`${webUrl}/`)).arrayBuffer(),
    );
    await b.pair(
      "captive_portal_check",
      () => b.call(srv, "captive_portal_check", { test_url: `${webUrl}/generate_204` }),
      "fetch GET of the probe",
      async () => (await fetch(`${webUrl}/generate_204`)).arrayBuffer(),
    );
    await b.pair(
      "healthz (no tool)",
      async () => (await fetch(`${srv.url}/healthz`)).arrayBuffer(),
      "node:http hello",
      async () => (await fetch(`${webUrl}/`)).arrayBuffer(),
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
