/**
 * A small stand-in for "the internet", all on loopback: a DNS server on port 53 of a loopback address this
 * file picks (answering example.com and friends), a resolv.conf naming it, and a web server with a
 * generate_204 endpoint. Spawned servers get env that points every default at it, so no test ever asks the
 * machine's resolver or a public host.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDnsServer, type TestDnsServer, type TestRecord } from "@roadnerd/testkit";
import { DEFAULT_CAPTIVE_PROBES, DEFAULT_TEST_URL } from "../../src/captive-config.ts";

export const WORLD_RECORDS: TestRecord[] = [
  { name: "example.com", type: "A", ttl: 300, data: "192.0.2.80" },
  { name: "example.com", type: "AAAA", ttl: 300, data: "2001:db8::80" },
  { name: "example.com", type: "MX", ttl: 3600, data: { preference: 10, exchange: "mail.example.com" } },
  { name: "example.com", type: "TXT", ttl: 600, data: "v=spf1 -all" },
  { name: "example.com", type: "NS", ttl: 86400, data: "ns1.example.com" },
  { name: "www.example.com", type: "CNAME", ttl: 120, data: "example.com" },
  { name: "80.2.0.192.in-addr.arpa", type: "PTR", ttl: 900, data: "example.com" },
];

/** Hosts the server reaches by default (captive test URL and probes): never to be asked in a test. */
export const PUBLIC_DEFAULT_HOSTS = [DEFAULT_TEST_URL, ...DEFAULT_CAPTIVE_PROBES.map((p) => p.url)].map(
  (u) => new URL(u).hostname,
);

export interface LoopbackWorld {
  dnsIp: string;
  dns: TestDnsServer;
  webUrl: string;
  /**
   * Env for spawnServer: RESOLV_CONF at our DNS server; the captive test URL and probes at our web server; and,
   * as a second guard, the public hosts the server would probe by default denied by name, which the policy
   * refuses before any lookup (see captive-config.ts).
   */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startLoopbackWorld(dnsIp: string): Promise<LoopbackWorld> {
  const dir = await mkdtemp(join(tmpdir(), "rn-world-"));
  const dns = await startDnsServer({ host: dnsIp, port: 53, records: WORLD_RECORDS });
  await writeFile(join(dir, "resolv.conf"), `nameserver ${dnsIp}\n`);
  const web: Server = createServer((req, res) => {
    if (req.url === "/generate_204") {
      res.writeHead(204).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("hello from the loopback world\n");
  });
  await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
  const webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  return {
    dnsIp,
    dns,
    webUrl,
    env: {
      RESOLV_CONF: join(dir, "resolv.conf"),
      CAPTIVE_TEST_URL: `${webUrl}/`,
      CAPTIVE_PROBES: JSON.stringify([{ url: `${webUrl}/generate_204`, expect: 204 }]),
      OUTBOUND_DENY: PUBLIC_DEFAULT_HOSTS.join(","),
    },
    async close() {
      await new Promise<void>((r) => web.close(() => r()));
      await dns.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
