/**
 * A fleet behind one gateway: two hosts as two network namespaces, each running the built network server over
 * HTTPS with a certificate from a CA made here (B also asks for client certificates), reached from the
 * gateway in the test's namespace through a hosts file (ROADNERD_HOSTS) naming both. `host` picks whose
 * server answers (their interface names tell them apart), a wrong CA and a missing client certificate are
 * typed refusals, the `hosts` tool reports each host's health, and a remote bind without TLS never starts.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CertFiles,
  createNetnsLab,
  createTestCa,
  type NetnsLab,
  netnsSkipReason,
  type SpawnedServer,
  spawnServer,
  type TestCa,
} from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type GatewayHttp, serveGatewayHttp } from "../src/gateway-http.ts";
import { createOrchestrator, type Orchestrator } from "../src/orchestrator.ts";
import { RulesPlanner } from "../src/planners/rules.ts";

const skip = netnsSkipReason();

type CallResult = Awaited<ReturnType<Client["callTool"]>>;

/** The error a failed call carries in its text content ({ error: { code, message, hint } }). */
function errorOf(r: CallResult): { code?: string; message?: string; hint?: string } {
  expect(r.isError).toBe(true);
  const text = (r.content as Array<{ text: string }>)[0]?.text ?? "{}";
  return (JSON.parse(text) as { error?: { code?: string; message?: string; hint?: string } }).error ?? {};
}

const interfaceNames = (r: CallResult) =>
  ((r.structuredContent as { interfaces?: Array<{ name: string }> }).interfaces ?? []).map((i) => i.name);

describe.skipIf(skip)(`a fleet of two hosts behind one gateway${skip ? ` (skipped: ${skip})` : ""}`, () => {
  let lab: NetnsLab;
  let ca: TestCa;
  let wrongCa: TestCa;
  let dir: string;
  let nsA: string;
  let addrA: string;
  let serverA: SpawnedServer;
  let serverB: SpawnedServer;
  let orchestrator: Orchestrator;
  let gateway: GatewayHttp;
  let client: Client;

  beforeAll(async () => {
    lab = createNetnsLab();
    [ca, wrongCa] = await Promise.all([createTestCa(), createTestCa("A CA nobody trusts")]);
    dir = await mkdtemp(join(tmpdir(), "rn-fleet-"));
    try {
      nsA = lab.addNs();
      const nsB = lab.addNs();
      // Interface names of their own, so each answer says which host gave it.
      addrA = lab.linkToRoot(nsA, "fleeta0").nsAddr;
      const addrB = lab.linkToRoot(nsB, "fleetb0").nsAddr;
      const [certA, certB, gatewayCert]: [CertFiles, CertFiles, CertFiles] = await Promise.all([
        ca.server("host-a", [addrA]),
        ca.server("host-b", [addrB]),
        ca.client("gateway"),
      ]);
      [serverA, serverB] = await Promise.all([
        lab.serve(nsA, "network", { env: { HOST: addrA }, tls: certA }),
        lab.serve(nsB, "network", { env: { HOST: addrB }, tls: { ...certB, clientCaFile: ca.caFile } }),
      ]);
      const b = { servers: { network: serverB.url }, token: serverB.token, ca: ca.caFile };
      const hostsFile = join(dir, "hosts.json");
      await writeFile(
        hostsFile,
        JSON.stringify({
          a: { servers: { network: serverA.url }, token: serverA.token, ca: ca.caFile },
          b: { ...b, cert: gatewayCert.certFile, key: gatewayCert.keyFile },
          "b-no-cert": b,
          "a-wrong-ca": { servers: { network: serverA.url }, token: serverA.token, ca: wrongCa.caFile },
          // A credential in a URL (as an operator may write one): the hosts tool must not repeat it.
          "a-userinfo": {
            servers: { network: serverA.url.replace("https://", "https://ops:hunter2-secret@") },
            token: serverA.token,
            ca: wrongCa.caFile,
          },
        }),
      );
      orchestrator = await createOrchestrator({ ROADNERD_HOSTS: hostsFile, ROADNERD_LOG_DIR: join(dir, "runs") });
      gateway = await serveGatewayHttp({
        catalog: orchestrator.catalog,
        attacher: orchestrator.attacher,
        planner: () => new RulesPlanner(),
        logDir: join(dir, "runs"),
      });
      client = new Client({ name: "fleet-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)));
    } catch (err) {
      await lab.cleanup();
      throw err;
    }
  });

  afterAll(async () => {
    await client?.close();
    await gateway?.close();
    await orchestrator?.attacher.close();
    await lab?.cleanup();
    await Promise.all([ca?.cleanup(), wrongCa?.cleanup()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("lists `hosts` and a `host` argument on every relayed tool and triage, naming the hosts", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).slice(0, 2)).toEqual(["triage", "hosts"]);
    for (const name of ["triage", "network__iface_info", "ports__who_uses_port"]) {
      const host = tools.find((t) => t.name === name)?.inputSchema.properties?.host;
      expect(host, name).toMatchObject({ enum: ["local", "a", "b", "b-no-cert", "a-wrong-ca", "a-userinfo"] });
    }
  });

  it('host "a" reaches A\'s network server over HTTPS, host "b" reaches B\'s (with the client certificate)', async () => {
    const a = await client.callTool({ name: "network__iface_info", arguments: { host: "a" } });
    expect(a.isError).toBeFalsy();
    expect(interfaceNames(a)).toEqual(["lo", "fleeta0"]);
    const b = await client.callTool({ name: "network__iface_info", arguments: { host: "b" } });
    expect(b.isError).toBeFalsy();
    expect(interfaceNames(b)).toEqual(["lo", "fleetb0"]);
    // The tool's own arguments still reach the server, and its own checks still apply.
    const bad = await client.callTool({ name: "network__dns_resolve", arguments: { host: "a", qname: "--x" } });
    expect(errorOf(bad)).toMatchObject({ code: "E_INVALID_INPUT" });
  });

  it("a host that is not in the file is a typed refusal naming the hosts", async () => {
    const r = await client.callTool({ name: "network__iface_info", arguments: { host: "c" } });
    expect(errorOf(r)).toMatchObject({
      code: "E_INVALID_INPUT",
      message: 'host: expected one of local, a, b, b-no-cert, a-wrong-ca, a-userinfo; got "c"',
    });
  });

  it("a CA that did not sign the host's certificate fails at once, typed, and says what to fix", async () => {
    const r = await client.callTool({ name: "network__iface_info", arguments: { host: "a-wrong-ca" } });
    const error = errorOf(r);
    expect(error.code).toBe("E_ATTACH");
    expect(error.message).toMatch(
      /^attach network@a-wrong-ca \(tls\): https:\/\/[\d.]+:\d+: the server's certificate is not signed by the CA trusted here/,
    );
    expect(error.hint).toContain("`ca` in ROADNERD_HOSTS");
  });

  it("a server that requires a client certificate refuses the gateway without one", async () => {
    const r = await client.callTool({ name: "network__iface_info", arguments: { host: "b-no-cert" } });
    const error = errorOf(r);
    expect(error.code).toBe("E_ATTACH");
    expect(error.message).toMatch(/^attach network@b-no-cert \(tls\): .*it requires a client certificate/);
  });

  it("`hosts` reports each host's servers' health, with why a host is not ok", async () => {
    const r = await client.callTool({ name: "hosts", arguments: {} });
    expect(r.isError).toBeFalsy();
    const { hosts } = r.structuredContent as {
      hosts: Array<{
        host: string;
        ok: boolean;
        servers: Array<{ server: string; url: string; ok: boolean; error?: unknown }>;
      }>;
    };
    expect(hosts.map((h) => [h.host, h.ok])).toEqual([
      ["a", true],
      ["b", true],
      ["b-no-cert", false],
      ["a-wrong-ca", false],
      ["a-userinfo", false],
    ]);
    expect(JSON.stringify(r)).not.toContain("hunter2-secret");
    expect(hosts[4]?.servers[0]?.url).toContain(serverA.url.replace("https://", ""));
    expect(hosts[0]?.servers).toEqual([expect.objectContaining({ server: "network", ok: true, url: serverA.url })]);
    expect(hosts[3]?.servers[0]?.error).toMatchObject({ code: "E_ATTACH", message: expect.stringContaining("(tls)") });
  });

  it("triage with host a calls A's server only (its run_id is in A's log, not B's)", async () => {
    const r = await client.callTool({ name: "triage", arguments: { host: "a", run_id: "fleet-triage-a" } });
    expect(r.isError).toBeFalsy();
    const evidence = (r.structuredContent as { evidence: Array<{ ok: boolean }> }).evidence;
    expect(evidence.length).toBeGreaterThan(0);
    expect(evidence[0]?.ok).toBe(true);
    const logged = (s: SpawnedServer) => s.lines.some((l) => l.includes('"run_id":"fleet-triage-a"'));
    expect(logged(serverA)).toBe(true);
    expect(logged(serverB)).toBe(false);
  });

  it("a server bound to a host's address without TLS refuses to start, saying why", async () => {
    const started = await spawnServer("network", {
      wrap: lab.wrap(nsA),
      env: { HOST: addrA, AUTH_TOKEN: "a-fleet-token-of-24-chars" },
    }).catch((e: unknown) => e);
    expect(started).toBeInstanceOf(Error);
    expect(String(started)).toMatch(/exited with 2 before listening.*refusing to bind [\d.]+ without TLS/s);
  });
});
