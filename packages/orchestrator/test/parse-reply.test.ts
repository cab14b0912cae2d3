/**
 * The strict reply parser against a corpus of good and bad model replies (test/fixtures/replies.json):
 * small-model habits (prose, fences, two calls, wrong names, missing params) and near-miss names, over the
 * real definitions of the network and dns-config servers.
 */
import { loadServer, readRegistry } from "@roadnerd/registry";
import { beforeAll, describe, expect, it } from "vitest";
import { type Catalog, catalogFrom } from "../src/catalog.ts";
import { parseReply, resolveToolName } from "../src/parse-reply.ts";
import corpus from "./fixtures/replies.json" with { type: "json" };

let catalog: Catalog;

beforeAll(async () => {
  const servers = readRegistry().filter((s) => s.name === "network" || s.name === "dns-config");
  const tools = new Map(
    await Promise.all(servers.map(async (s) => [s.name, (await loadServer(s.name)).tools] as const)),
  );
  catalog = catalogFrom(servers, tools);
});

describe("parseReply corpus", () => {
  for (const c of corpus as Array<{ why: string; reply: string; expect: Record<string, unknown> }>) {
    it(c.why, () => {
      const r = parseReply(c.reply, catalog);
      expect(r.kind).toBe(c.expect.kind);
      if (r.kind === "call") {
        expect(r.call.id).toBe(c.expect.tool);
        expect(r.resolvedFrom).toBe(c.expect.resolvedFrom);
      }
      if (r.kind === "label") expect(r.label).toBe(c.expect.label);
      if (r.kind === "invalid") {
        expect(r.code).toBe(c.expect.code);
        if (c.expect.message) expect(r.message).toContain(c.expect.message);
        if (c.expect.suggestions)
          expect([...(r.suggestions ?? [])].sort()).toEqual([...(c.expect.suggestions as string[])].sort());
      }
    });
  }
});

describe("parseReply details", () => {
  it("a valid call keeps the params exactly and splits server and tool", () => {
    const r = parseReply('{"tool":"network/tcp_port_check","params":{"host":"192.0.2.10","port":443}}', catalog);
    expect(r).toEqual({
      kind: "call",
      call: {
        id: "network/tcp_port_check",
        server: "network",
        tool: "tcp_port_check",
        params: { host: "192.0.2.10", port: 443 },
      },
    });
  });

  it("invalid params name the field and give the tool's own example", () => {
    const r = parseReply('{"tool":"network/dns_resolve","params":{"qname":5}}', catalog);
    expect(r.kind).toBe("invalid");
    if (r.kind === "invalid")
      expect(r.message).toContain(
        'Example: {"tool":"network/dns_resolve","params":{"qname":"example.com","type":"A"}}',
      );
  });

  it("every catalog id resolves to itself, exactly", () => {
    for (const e of catalog.entries) expect(resolveToolName(e.id, catalog)).toEqual({ entry: e, exact: true });
  });

  it("a bare name shared by two servers is ambiguous, not guessed", () => {
    const servers = readRegistry().filter((s) => s.name === "network" || s.name === "dns-config");
    const net = catalog.entries.filter((e) => e.server === "network").map((e) => e.definition);
    const twin = catalogFrom(
      servers,
      new Map([
        ["network", net],
        ["dns-config", net],
      ]),
    );
    expect(resolveToolName("route_info", twin)).toEqual({
      candidates: ["network/route_info", "dns-config/route_info"],
    });
  });
});
