/**
 * Local targets for the /probe tests and the side-by-side with blackbox_exporter, all on 127.0.0.0/8: a healthy
 * HTTP server, HTTPS with a valid, an expired and a wrongly named certificate (the test CA, to be trusted with
 * NODE_EXTRA_CA_CERTS or blackbox's ca_file), a refused port, a server that answers too late, an open network
 * and a captive portal, and a DNS server with a zone.
 */
import {
  type CaptivePortal,
  CLOSED_PORT,
  diagRoutes,
  generateTestCerts,
  NM_EXPECTED_BODY,
  startCaptivePortal,
  startDnsServer,
  startTestServer,
  type TestCerts,
  type TestDnsServer,
  type TestServer,
} from "@roadnerd/testkit";

/** How long the slow server waits before its answer: past every probe timeout the tests use. */
export const SLOW_MS = 4_000;

export interface ProbeWorld {
  certs: TestCerts;
  plain: TestServer;
  valid: TestServer;
  expired: TestServer;
  wrongName: TestServer;
  slow: TestServer;
  open: CaptivePortal;
  portal: CaptivePortal;
  dns: TestDnsServer;
  /** host:port of a port nothing listens on. */
  refused: string;
  /** CAPTIVE_PROBES for a network server: the open network's well-known answers. */
  captiveProbes: string;
  close(): Promise<void>;
}

export async function startProbeWorld(): Promise<ProbeWorld> {
  const certs = await generateTestCerts();
  const routes = diagRoutes();
  const pending = new Set<NodeJS.Timeout>();
  const [plain, valid, expired, wrongName, slow, open, portal, dns] = await Promise.all([
    startTestServer(routes),
    startTestServer(routes, { tls: certs.valid }),
    startTestServer(routes, { tls: certs.expired }),
    startTestServer(routes, { tls: certs.wrongName }),
    startTestServer((_req, res) => {
      const t = setTimeout(() => {
        pending.delete(t);
        res.writeHead(200, { "content-type": "text/plain" }).end("late");
      }, SLOW_MS);
      pending.add(t);
    }),
    startCaptivePortal(),
    startCaptivePortal(),
    startDnsServer({ records: [{ name: "host.example.test", type: "A", ttl: 60, data: "192.0.2.10" }] }),
  ]);
  portal.mode = "redirect";
  const captiveProbes = JSON.stringify([
    { url: `${open.url}/generate_204`, expect: 204 },
    { url: `${open.url}/expected`, expect: NM_EXPECTED_BODY },
  ]);
  return {
    certs,
    plain,
    valid,
    expired,
    wrongName,
    slow,
    open,
    portal,
    dns,
    refused: `127.0.0.1:${CLOSED_PORT}`,
    captiveProbes,
    async close() {
      for (const t of pending) clearTimeout(t);
      await Promise.allSettled([plain, valid, expired, wrongName, slow, open, portal, dns].map((s) => s.close()));
      // Its CA file's temp dir too: a run left one per world.
      await certs.cleanup();
    },
  };
}
