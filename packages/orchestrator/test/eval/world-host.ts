/**
 * The far side of an evaluation scenario, run inside one of its network namespaces (`ip netns exec`): a
 * DNS server (testkit's) and plain HTTP hosts on the namespace's own addresses. Prints the kernel's
 * `listening` line when everything is up, and runs until it is killed (the lab's cleanup does that).
 *
 *   node scripts/run-ts.mjs packages/orchestrator/test/eval/world-host.ts '<WorldSpec JSON>'
 */
import { createServer } from "node:http";
// The module itself, not testkit's index (which reaches the registry and every server's source).
import { startDnsServer, type TestRecord } from "../../../testkit/src/dns-server.ts";

export interface HttpHostSpec {
  host: string;
  port: number;
  /** open: known answers (204, NetworkManager text, a page); portal: every request 302 to `login`; page: 200 page. */
  mode: "open" | "portal" | "page";
  login?: string;
}

export interface WorldSpec {
  dns?: { host: string; records: TestRecord[] };
  http?: HttpHostSpec[];
}

export const NM_BODY = "NetworkManager is online";

function startHttp(spec: HttpHostSpec): Promise<void> {
  const server = createServer((req, res) => {
    if (spec.mode === "portal") {
      res.writeHead(302, { location: spec.login ?? "/" }).end();
    } else if (spec.mode === "open" && req.url?.startsWith("/generate_204")) {
      res.writeHead(204).end();
    } else if (spec.mode === "open" && req.url?.startsWith("/check_network_status")) {
      res.writeHead(200, { "content-type": "text/plain" }).end(NM_BODY);
    } else {
      res.writeHead(200, { "content-type": "text/html" }).end("<html><body>roadnerd eval page</body></html>");
    }
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(spec.port, spec.host, () => resolve());
  });
}

const spec = JSON.parse(process.argv[2] ?? "{}") as WorldSpec;
if (spec.dns) await startDnsServer({ host: spec.dns.host, port: 53, records: spec.dns.records });
await Promise.all((spec.http ?? []).map(startHttp));
process.stdout.write(`${JSON.stringify({ msg: "listening", url: "world://ready" })}\n`);
