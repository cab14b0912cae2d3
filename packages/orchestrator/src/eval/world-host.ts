/**
 * The far side of an evaluation scenario, run inside one of its network namespaces (`ip netns exec`) as
 * `roadnerd eval --world '<spec JSON>'`: a DNS server (testkit's) and plain HTTP hosts on the namespace's own
 * addresses. Prints the kernel's `listening` line when everything is up, and runs until it is killed (the
 * lab's cleanup does that).
 */
import { createServer } from "node:http";
import { startDnsServer } from "@roadnerd/testkit";
import { z } from "zod";
import { UsageError } from "../errors.ts";

const httpHostSpec = z.strictObject({
  host: z.string(),
  port: z.number().int(),
  mode: z
    .enum(["open", "portal", "page", "proxy407"])
    .describe(
      "open: known answers (204, NetworkManager text, a page); portal: every request 302 to `login`; page: a 200 page; proxy407: a forward proxy that wants credentials",
    ),
  login: z.string().optional(),
});

export const worldSpecSchema = z.strictObject({
  dns: z
    .strictObject({
      host: z.string(),
      records: z.array(
        z.strictObject({
          name: z.string(),
          type: z.enum(["A", "AAAA", "CNAME", "NS", "PTR"]),
          ttl: z.number().int(),
          data: z.string(),
        }),
      ),
    })
    .optional(),
  http: z.array(httpHostSpec).optional(),
});

export type WorldSpec = z.infer<typeof worldSpecSchema>;
type HttpHostSpec = z.infer<typeof httpHostSpec>;

export const NM_BODY = "NetworkManager is online";

function startHttp(spec: HttpHostSpec): Promise<void> {
  const server = createServer((req, res) => {
    if (spec.mode === "proxy407") {
      // A corporate proxy without the user's credentials: every request, CONNECT included, is refused.
      res.writeHead(407, { "proxy-authenticate": 'Basic realm="corp"', connection: "close" }).end();
    } else if (spec.mode === "portal") {
      res.writeHead(302, { location: spec.login ?? "/" }).end();
    } else if (spec.mode === "open" && req.url?.startsWith("/generate_204")) {
      res.writeHead(204).end();
    } else if (spec.mode === "open" && req.url?.startsWith("/check_network_status")) {
      res.writeHead(200, { "content-type": "text/plain" }).end(NM_BODY);
    } else {
      res.writeHead(200, { "content-type": "text/html" }).end("<html><body>roadnerd eval page</body></html>");
    }
  });
  // CONNECT (an https:// target through the proxy) is refused the same way.
  server.on("connect", (_req, socket) => {
    socket.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="corp"\r\n\r\n');
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(spec.port, spec.host, () => resolve());
  });
}

/** Start the world a spec describes, say `listening`, and never resolve (the process is killed). */
export async function runWorldHost(specJson: string): Promise<never> {
  let raw: unknown;
  try {
    raw = JSON.parse(specJson);
  } catch {
    throw new UsageError("--world: expected a world spec as JSON");
  }
  const checked = worldSpecSchema.safeParse(raw);
  if (!checked.success) throw new UsageError(`--world: not a world spec: ${z.prettifyError(checked.error)}`);
  const spec = checked.data;
  if (spec.dns) await startDnsServer({ host: spec.dns.host, port: 53, records: spec.dns.records });
  await Promise.all((spec.http ?? []).map(startHttp));
  process.stdout.write(`${JSON.stringify({ msg: "listening", url: "world://ready" })}\n`);
  return new Promise<never>(() => {});
}
