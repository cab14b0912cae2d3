/**
 * ROADNERD_HOSTS: the fleet file is checked once at start, each mistake one line naming where it is; paths are
 * resolved beside the file; `host` on a gateway tool is taken off before the tool's own strict schema. The
 * calls over HTTPS to real hosts are in fleet.links.test.ts.
 */
import { execFileSync } from "node:child_process";
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CertFiles, createTestCa, type TestCa } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { splitHost, withHostArg } from "../src/gateway-hosts.ts";
import { readHostsFile } from "../src/hosts.ts";

const KNOWN = ["network", "ports"];
const TOKEN = "a-fleet-token-of-24-chars";
let dir: string;
let ca: TestCa;
let leaf: CertFiles;

async function hostsFile(content: unknown): Promise<string> {
  const path = join(dir, `hosts-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

/** The UsageError's message, or a failure when the file was accepted. */
async function refusal(content: unknown): Promise<string> {
  const path = await hostsFile(content);
  try {
    readHostsFile(path, KNOWN);
  } catch (err) {
    expect(err).toMatchObject({ code: "E_USAGE" });
    return String(Reflect.get(Object(err), "message")).replace(path, "<file>");
  }
  throw new Error("accepted");
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rn-hosts-"));
  ca = await createTestCa();
  leaf = await ca.server("leaf", ["127.0.0.1"]);
  await copyFile(ca.caFile, join(dir, "ca.pem"));
  await writeFile(join(dir, "garbage.pem"), "this is not a certificate\n");
  await writeFile(join(dir, "empty-cert.pem"), "-----BEGIN CERTIFICATE-----\n");
  execFileSync("mkfifo", [join(dir, "fifo.pem")]);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await ca?.cleanup();
});

describe("the hosts file", () => {
  it("resolves each host's servers with its token, and its CA (relative to the file) for https only", async () => {
    const path = await hostsFile({
      a: { servers: { network: "https://10.0.0.2:7101", ports: "http://10.0.0.2:7103" }, token: TOKEN, ca: "ca.pem" },
    });
    // The http:// one carries the token in clear: only with ALLOW_PLAINTEXT=1 (below).
    const fleet = readHostsFile(path, KNOWN, { allowPlaintext: true });
    expect([...fleet.keys()]).toEqual(["a"]);
    expect(fleet.get("a")?.get("network")).toEqual({
      url: "https://10.0.0.2:7101",
      token: TOKEN,
      tls: { caFile: join(dir, "ca.pem") },
    });
    expect(fleet.get("a")?.get("ports")).toEqual({ url: "http://10.0.0.2:7103", token: TOKEN });
  });

  it("one line per mistake, naming where it is", async () => {
    expect(await refusal("{not json")).toBe("ROADNERD_HOSTS <file>: not a readable JSON file");
    expect(await refusal({ local: { servers: { network: "https://h:1" } } })).toMatch(
      /local: "local" is the gateway's own machine/,
    );
    expect(await refusal({ "Bad Name": { servers: { network: "https://h:1" } } })).toMatch(/a host name is lower-case/);
    expect(await refusal({ a: { servers: {} } })).toMatch(/a\.servers: name at least one server/);
    expect(await refusal({ a: { servers: { network: "ftp://h:1" } } })).toMatch(
      /a\.servers\.network: expected an http/,
    );
    expect(await refusal({ a: { servers: { network: "https://h:1" }, tokn: TOKEN } })).toMatch(/tokn/);
    expect(await refusal({ a: { servers: { storage: "https://h:1" } } })).toBe(
      "ROADNERD_HOSTS <file>: a.servers.storage: not a server (known: network, ports)",
    );
    expect(await refusal({ a: { servers: { network: "https://h:1" }, ca: "missing.pem" } })).toBe(
      `ROADNERD_HOSTS <file>: a.ca ${join(dir, "missing.pem")}: cannot read it (ENOENT)`,
    );
    expect(await refusal({ a: { servers: { network: "https://h:1" }, cert: "ca.pem" } })).toBe(
      "ROADNERD_HOSTS <file>: a: a client certificate needs both cert and key",
    );
  });
});

// Regression (attacker review F8): a garbage `ca` passed the start (only readability was checked) and every
// call to that host then failed with a handshake error that blamed the server's certificate.
describe("the hosts file's PEM files are checked at start, naming the host and the field", () => {
  const withCa = (file: string, field = "ca") => ({ a: { servers: { network: "https://h:1" }, [field]: file } });

  it.each([
    ["garbage.pem", "not a PEM file"],
    ["empty-cert.pem", "no certificate in it"],
    ["fifo.pem", "a FIFO, not a regular file"],
  ])("ca: %s → %s", async (file, why) => {
    expect(await refusal(withCa(file))).toBe(`ROADNERD_HOSTS <file>: a.ca ${join(dir, file)}: ${why}`);
  });

  it("a key or a leaf certificate as ca, a certificate as key", async () => {
    expect(await refusal(withCa(leaf.keyFile))).toBe(
      `ROADNERD_HOSTS <file>: a.ca ${leaf.keyFile}: no certificate in it`,
    );
    expect(await refusal(withCa(leaf.certFile))).toMatch(
      /^ROADNERD_HOSTS <file>: a\.ca .*leaf.crt: .*is not a CA certificate/,
    );
    const pair = { a: { servers: { network: "https://h:1" }, cert: leaf.certFile, key: leaf.certFile } };
    expect(await refusal(pair)).toMatch(/^ROADNERD_HOSTS <file>: a\.key .*leaf\.crt: no private key in it/);
  });
});

// Regression (sealed attacker review F11): a client certificate with the key of another one, and a token with a
// CR or LF in it, passed the start; every call to that host then failed (a handshake, a header undici refuses).
describe("a host's client certificate and token are checked at start, naming the host and the field", () => {
  it("a key that is not the certificate's", async () => {
    const other = await ca.client("other");
    const mine = await ca.client("mine");
    const pair = { a: { servers: { network: "https://h:1" }, cert: mine.certFile, key: other.keyFile } };
    expect(await refusal(pair)).toBe(
      `ROADNERD_HOSTS <file>: a.key ${other.keyFile}: not the private key of a.cert ${mine.certFile}`,
    );
    const good = await hostsFile({
      a: { servers: { network: "https://h:1" }, cert: mine.certFile, key: mine.keyFile },
    });
    expect(readHostsFile(good, KNOWN).get("a")?.get("network")?.tls).toEqual({
      certFile: mine.certFile,
      keyFile: mine.keyFile,
    });
  });

  it.each([
    ["CR LF", `${TOKEN}\r\nX-Injected: 1`],
    ["LF", `${TOKEN}\n`],
    ["a space", `${TOKEN} x`],
  ])("a token with %s", async (_, token) => {
    expect(await refusal({ a: { servers: { network: "https://h:1" }, token } })).toBe(
      "ROADNERD_HOSTS <file>: a.token: printable ASCII without spaces, CR or LF, as its servers' AUTH_TOKEN; the whole file was refused",
    );
  });

  // Regression (new-user review): a placeholder token for one host stopped `roadnerd mcp` with a line that did not
  // say the minimum, nor that the other hosts were refused with it.
  it("a short token: the host, the field, the minimum, and that the whole file was refused", async () => {
    const file = {
      a: { servers: { network: "https://h:1" }, token: TOKEN },
      b: { servers: { network: "https://h:2" }, token: "changeme" },
    };
    expect(await refusal(file)).toBe(
      "ROADNERD_HOSTS <file>: b.token: at least 16 characters, as its servers' AUTH_TOKEN (openssl rand -hex 16); the whole file was refused",
    );
  });
});

// Regression (attacker review F5): a host given as http:// beyond loopback, with a token, was accepted and its
// token sent across the LAN in clear on every call.
describe("a token over plain http:// to another machine", () => {
  const clear = { a: { servers: { network: "http://10.0.0.2:7101" }, token: TOKEN } };

  it("is refused at start, naming the host, the server and both ways out", async () => {
    expect(await refusal(clear)).toBe(
      "ROADNERD_HOSTS <file>: a.servers.network: http://10.0.0.2:7101 is plain http://, so a's token would cross the network in clear; use https:// (with its ca), or set ALLOW_PLAINTEXT=1 where the network is private",
    );
  });

  // Regression (stop 24 attacker F1): `HTTP://` and `Http://` slipped past a lower-case prefix check.
  it("is refused whatever the scheme's case", async () => {
    for (const scheme of ["HTTP", "Http"]) {
      const msg = await refusal({ a: { servers: { network: `${scheme}://10.0.0.2:7101` }, token: TOKEN } });
      expect(msg).toContain("token would cross the network in clear");
    }
  });

  it("is accepted with ALLOW_PLAINTEXT=1, over loopback, or without a token", async () => {
    expect(
      readHostsFile(await hostsFile(clear), KNOWN, { allowPlaintext: true })
        .get("a")
        ?.get("network"),
    ).toEqual({
      url: "http://10.0.0.2:7101",
      token: TOKEN,
    });
    for (const url of ["http://127.0.0.1:7101", "http://[::1]:7101", "http://localhost:7101"]) {
      const path = await hostsFile({ a: { servers: { network: url }, token: TOKEN } });
      expect(readHostsFile(path, KNOWN).get("a")?.get("network")?.url).toBe(url);
    }
    const tokenless = await hostsFile({ a: { servers: { network: "http://10.0.0.2:7101" } } });
    expect(readHostsFile(tokenless, KNOWN).get("a")?.get("network")).toEqual({ url: "http://10.0.0.2:7101" });
  });
});

describe("the host argument", () => {
  const HOSTS = ["a", "b"];

  it("is listed beside a tool's parameters only when there are hosts", () => {
    const listed = { name: "t", inputSchema: { type: "object" as const, properties: { qname: { type: "string" } } } };
    expect(withHostArg(listed, [])).toBe(listed);
    expect(withHostArg(listed, HOSTS).inputSchema.properties).toEqual({
      qname: { type: "string" },
      host: { type: "string", enum: ["local", "a", "b"], description: expect.stringContaining("a, b") },
    });
  });

  it("is taken off the arguments; local or absent is this machine; anything else is a typed refusal", () => {
    expect(splitHost({ host: "a", qname: "x" }, HOSTS)).toEqual({ host: "a", args: { qname: "x" } });
    expect(splitHost({ host: "local", qname: "x" }, HOSTS)).toEqual({ host: undefined, args: { qname: "x" } });
    expect(splitHost({ qname: "x" }, HOSTS)).toEqual({ host: undefined, args: { qname: "x" } });
    // Without hosts it is an ordinary unknown key, for the tool's own schema to refuse.
    expect(splitHost({ host: "a" }, [])).toEqual({ host: undefined, args: { host: "a" } });
    expect(() => splitHost({ host: "c" }, HOSTS)).toThrow(/host: expected one of local, a, b; got "c"/);
    expect(() => splitHost({ host: 7 }, HOSTS)).toThrow(expect.objectContaining({ code: "E_INVALID_INPUT" }));
  });
});
