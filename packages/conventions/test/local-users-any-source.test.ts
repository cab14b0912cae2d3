/**
 * Regression (stop 31's review, high): a server on 127.0.0.1 judged a caller only when the caller's address was
 * loopback, so `nobody` connecting from one of the host's other addresses (its LAN address, docker0, a global
 * IPv6) was served as root. A packet to 127/8 or ::1 only comes from this host: a connection with either end on
 * loopback is judged, whatever its source. Here a namespace of the test's own with a second address on its
 * loopback (10.9.9.9, fd00::9), a built server bound to 127.0.0.1 and one to ::1 inside it, from its dist/ (the
 * kernel's exact lookup over netlink) and from a copy without the native module (/proc/net's tables).
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createNetnsLab,
  type ListeningProcess,
  type NetnsLab,
  netnsSkipReason,
  spawnListening,
} from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../registry/src/read-registry.ts";

const NOBODY = 65534;
let lab: NetnsLab;
let ns: string;
let other: string;
let copy: string;
const servers: ListeningProcess[] = [];

/** GET /actions from inside the namespace (`from`, default the server's), as `uid`, from `source`: the status. */
function statusFrom(uid: number, source: string, url: string, from = ns): number {
  const target = new URL(`${url}/actions`);
  const script = `require("node:http").get({host:${JSON.stringify(target.hostname.replace(/^\[|\]$/g, ""))},port:${target.port},path:"/actions",localAddress:${JSON.stringify(source)}},r=>{r.resume();process.stdout.write(String(r.statusCode))}).on("error",e=>process.stdout.write("error "+e.code))`;
  const argv = [...lab.wrap(from), "setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", process.execPath];
  return Number(execFileSync(argv[0] as string, [...argv.slice(1), "-e", script], { encoding: "utf8" }));
}

describe.skipIf(netnsSkipReason())("a local user from another address of the host", () => {
  beforeAll(async () => {
    lab = createNetnsLab();
    ns = lab.addNs();
    lab.ip(ns, "addr", "add", "10.9.9.9/32", "dev", "lo");
    lab.ip(ns, "-6", "addr", "add", "fd00::9/128", "dev", "lo", "nodad");
    // Addresses of this host that os.networkInterfaces() does not list: one on an interface that is down (a veth
    // pair left down, as docker0 without containers has no carrier), and an AnyIP route's.
    lab.ip(ns, "link", "add", "rnd0", "type", "veth", "peer", "name", "rnd1");
    lab.ip(ns, "addr", "add", "10.60.0.1/24", "dev", "rnd0");
    lab.ip(ns, "route", "add", "local", "10.50.0.0/16", "dev", "lo");
    // Another host: a namespace of its own over a veth pair (10.77.0.2 → 10.77.0.1).
    other = lab.addNs();
    lab.ip(ns, "link", "add", "rnh0", "type", "veth", "peer", "name", "rnh1", "netns", other);
    lab.ip(ns, "addr", "add", "10.77.0.1/24", "dev", "rnh0");
    lab.ip(ns, "link", "set", "rnh0", "up");
    lab.ip(other, "addr", "add", "10.77.0.2/24", "dev", "rnh1");
    lab.ip(other, "link", "set", "rnh1", "up");
    // The same server without the native module: the tables' path (ADR 0064's fallback).
    copy = mkdtempSync(join(tmpdir(), "rn-any-source-"));
    cpSync(join(REPO_ROOT, "servers/dns-config/dist"), join(copy, "dist"), { recursive: true });
    rmSync(join(copy, "dist/sock-diag.node"));
  });
  afterAll(async () => {
    for (const s of servers) await s.stop();
    await lab?.cleanup();
    rmSync(copy, { recursive: true, force: true });
  });

  it.each([
    { lookup: "netlink", host: "127.0.0.1", source: "10.9.9.9", bare: false },
    { lookup: "netlink", host: "::1", source: "fd00::9", bare: false },
    { lookup: "/proc/net's tables", host: "127.0.0.1", source: "10.9.9.9", bare: true },
    { lookup: "/proc/net's tables", host: "::1", source: "fd00::9", bare: true },
  ])("on $host, nobody from $source is refused, root served ($lookup)", async ({ host, source, bare }) => {
    const main = bare ? join(copy, "dist/main.js") : join(REPO_ROOT, "servers/dns-config/dist/main.js");
    const server = await spawnListening([...lab.wrap(ns), process.execPath, main], { env: { HOST: host } });
    servers.push(server);
    expect(statusFrom(NOBODY, source, server.url)).toBe(403);
    expect(statusFrom(0, source, server.url)).toBe(200);
  });

  // Stop 32's review: a server bound beyond loopback without a token (ALLOW_UNAUTHENTICATED=1, meant for a
  // container) served nobody as root when nobody called it from the host's own address.
  it.each([
    { host: "10.9.9.9", source: "10.9.9.9" },
    { host: "0.0.0.0", source: "10.9.9.9" },
    { host: "fd00::9", source: "fd00::9" },
    { host: "10.9.9.9", source: "10.60.0.1" },
    { host: "10.9.9.9", source: "10.50.1.2" },
  ])(
    "bound to $host without a token, nobody from this host's $source is refused, root served",
    async ({ host, source }) => {
      const main = join(REPO_ROOT, "servers/dns-config/dist/main.js");
      const env = { HOST: host, ALLOW_UNAUTHENTICATED: "1", ALLOW_PLAINTEXT: "1" };
      const server = await spawnListening([...lab.wrap(ns), process.execPath, main], { env });
      servers.push(server);
      const url = host === "0.0.0.0" ? server.url.replace("0.0.0.0", "10.9.9.9") : server.url;
      expect(statusFrom(NOBODY, source, url)).toBe(403);
      expect(statusFrom(0, source, url)).toBe(200);
    },
  );

  it("bound beyond loopback without a token, a caller from another host is not judged (its uid is not ours to know)", async () => {
    const main = join(REPO_ROOT, "servers/dns-config/dist/main.js");
    const env = { HOST: "10.77.0.1", ALLOW_UNAUTHENTICATED: "1", ALLOW_PLAINTEXT: "1" };
    const server = await spawnListening([...lab.wrap(ns), process.execPath, main], { env });
    servers.push(server);
    expect(statusFrom(NOBODY, "10.77.0.2", server.url, other)).toBe(200);
  });
});
