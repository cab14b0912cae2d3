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
let copy: string;
const servers: ListeningProcess[] = [];

/** GET /actions from inside the namespace, as `uid`, from `source`: the status. */
function statusFrom(uid: number, source: string, url: string): number {
  const target = new URL(`${url}/actions`);
  const script = `require("node:http").get({host:${JSON.stringify(target.hostname.replace(/^\[|\]$/g, ""))},port:${target.port},path:"/actions",localAddress:${JSON.stringify(source)}},r=>{r.resume();process.stdout.write(String(r.statusCode))}).on("error",e=>process.stdout.write("error "+e.code))`;
  const argv = [...lab.wrap(ns), "setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", process.execPath];
  return Number(execFileSync(argv[0] as string, [...argv.slice(1), "-e", script], { encoding: "utf8" }));
}

describe.skipIf(netnsSkipReason())("a local user from another address of the host", () => {
  beforeAll(async () => {
    lab = createNetnsLab();
    ns = lab.addNs();
    lab.ip(ns, "addr", "add", "10.9.9.9/32", "dev", "lo");
    lab.ip(ns, "-6", "addr", "add", "fd00::9/128", "dev", "lo", "nodad");
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
  ])(
    "bound to $host without a token, nobody from the host's own $source is refused, root served",
    async ({ host, source }) => {
      const main = join(REPO_ROOT, "servers/dns-config/dist/main.js");
      const env = { HOST: host, ALLOW_UNAUTHENTICATED: "1", ALLOW_PLAINTEXT: "1" };
      const server = await spawnListening([...lab.wrap(ns), process.execPath, main], { env });
      servers.push(server);
      const url = host === "0.0.0.0" ? server.url.replace("0.0.0.0", source) : server.url;
      expect(statusFrom(NOBODY, source, url)).toBe(403);
      expect(statusFrom(0, source, url)).toBe(200);
    },
  );
});
