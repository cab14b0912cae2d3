/**
 * The fair-share tests' world: a target that answers `/fast` at once and holds every other request until the
 * test lets it go (a held request whose caller went away is forgotten), and a gateway on 127.0.0.1:0 that also
 * serves uid 65534, with network attached by one call first (its spawn is not what these tests measure).
 */
import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readRegistry } from "@roadnerd/registry";
import { request } from "undici";
import { expect } from "vitest";
import { Attacher } from "../src/attach.ts";
import { loadCatalog } from "../src/catalog.ts";
import { type GatewayHttp, serveGatewayHttp } from "../src/gateway-http.ts";
import { RulesPlanner } from "../src/planners/rules.ts";
import { MCP_HEADERS, rpc } from "./gateway-clients.ts";

export interface HeldWorld {
  gateway: GatewayHttp;
  attacher: Attacher;
  targetUrl: string;
  /** The target's requests still held, by path. */
  held: Map<string, ServerResponse>;
  close: () => Promise<void>;
}

export async function heldWorld(): Promise<HeldWorld> {
  const held = new Map<string, ServerResponse>();
  const target = createServer((req, res) => {
    if (req.url === "/fast") return void res.end("ok");
    const path = req.url ?? "";
    held.set(path, res);
    res.once("close", () => held.get(path) === res && held.delete(path));
  });
  target.listen(0, "127.0.0.1");
  await once(target, "listening");
  const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  const savedUids = process.env.ALLOWED_UIDS;
  process.env.ALLOWED_UIDS = "65534"; // uid 65534 is a second local user the gateway serves
  const attacher = new Attacher({ servers: readRegistry() });
  const gateway = await serveGatewayHttp({ catalog: await loadCatalog(), attacher, planner: () => new RulesPlanner() });
  const close = async () => {
    for (const res of held.values()) res.destroy();
    if (savedUids === undefined) delete process.env.ALLOWED_UIDS;
    else process.env.ALLOWED_UIDS = savedUids;
    await gateway.close();
    await attacher.close();
    target.closeAllConnections();
    await new Promise((r) => target.close(r));
  };
  try {
    const warm = await request(gateway.url, {
      method: "POST",
      headers: MCP_HEADERS,
      body: rpc(0, `${targetUrl}/fast`),
    });
    expect(warm.statusCode).toBe(200);
    await warm.body.dump();
  } catch (err) {
    await close();
    throw err;
  }
  return { gateway, attacher, targetUrl, held, close };
}
