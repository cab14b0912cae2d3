/**
 * dns_config_get over roots built for each layout (real files and symlinks, DNS_CONFIG_ROOT pointing at them),
 * each answer compared whole; then the live path: the built server started by `ip netns exec` in a namespace
 * whose /etc/netns/<ns>/resolv.conf is bind-mounted over /etc/resolv.conf, DNS_CONFIG_ROOT unset.
 */
import { createClient } from "@roadnerd/client";
import type { ResultOf } from "@roadnerd/conventions";
import { callTool } from "@roadnerd/conventions/testing";
import { createNetnsLab, netnsSkipReason } from "@roadnerd/testkit";
import { afterEach, describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";
import { dnsConfigGet } from "../../src/tools/dns-config-get.ts";
import { type BuiltRoot, buildRoot, type RootSpec } from "../helpers/build-root.ts";
import { HAND_WRITTEN, layouts, NETWORK_MANAGER, RESOLVED_STUB } from "../helpers/layouts.ts";

type Result = ResultOf<typeof dnsConfigGet>;

const DEFAULT_OPTIONS = {
  ndots: 1,
  timeout: 5,
  attempts: 2,
  rotate: false,
  edns0: false,
  trust_ad: false,
  single_request: false,
  single_request_reopen: false,
  use_vc: false,
  no_tld_query: false,
  no_aaaa: false,
};

/** The fields every answer has, for a plain file nobody manages; each case states what differs. */
const NOBODY = {
  mode: "other",
  servers: [],
  search: [],
  managed_by: "none",
  decided_by: "none",
  file: "/etc/resolv.conf",
  points_to: null,
  read: "/etc/resolv.conf",
  resolved_view: null,
  nameservers: [],
  stub: [],
  upstream: [],
  upstream_from: null,
  links: [],
  options: DEFAULT_OPTIONS,
  options_raw: [],
  warnings: [],
  truncated: false,
  omitted: 0,
};

const roots: BuiltRoot[] = [];
afterEach(async () => {
  for (const r of roots.splice(0)) await r.remove();
});

async function getIn(spec: RootSpec, input: Record<string, unknown> = {}): Promise<Result> {
  const root = await buildRoot(spec);
  roots.push(root);
  return callTool(server, dnsConfigGet, input, { env: root.env });
}

const UPSTREAM = ["192.0.2.53", "2001:db8::53"];
const LINK_2 = {
  ifindex: 2,
  name: "eth0",
  servers: ["192.0.2.53", "2001:db8::53"],
  domains: ["corp.example", "~lab.test"],
  source: "systemd-resolved",
};
const LINK_3 = {
  ifindex: 3,
  name: null,
  servers: ["198.51.100.53", "198.51.100.54"],
  domains: ["lab.test", "~internal.test"],
  source: "systemd-networkd",
};

describe("dns_config_get in built roots", () => {
  it("systemd-resolved stub: the upstream servers from resolved's uplink file, the per-link state beside", async () => {
    expect(await getIn(layouts.resolvedStub)).toEqual({
      ...NOBODY,
      mode: "resolved",
      servers: UPSTREAM,
      search: ["corp.example", "lab.test"],
      managed_by: "systemd-resolved",
      decided_by: "path",
      points_to: "../run/systemd/resolve/stub-resolv.conf",
      read: "/run/systemd/resolve/stub-resolv.conf",
      resolved_view: "stub",
      nameservers: ["127.0.0.53"],
      stub: ["127.0.0.53"],
      upstream: UPSTREAM,
      upstream_from: "/run/systemd/resolve/resolv.conf",
      links: [LINK_2, LINK_3],
      options: { ...DEFAULT_OPTIONS, edns0: true, trust_ad: true },
      options_raw: ["edns0", "trust-ad"],
      summary:
        "resolved (systemd-resolved) via stub 127.0.0.53: 192.0.2.53, 2001:db8::53; search corp.example lab.test",
    });
  });

  it("systemd-resolved stub without its uplink file: the upstream servers from the per-link state", async () => {
    const { "run/systemd/resolve/resolv.conf": _, ...spec } = layouts.resolvedStub;
    const r = await getIn(spec);
    expect(r).toMatchObject({
      mode: "resolved",
      servers: ["192.0.2.53", "2001:db8::53", "198.51.100.53", "198.51.100.54"],
      upstream_from: "per-link state",
      warnings: [],
    });
  });

  it("systemd-resolved stub with nothing behind it and a varlink socket left over: both said", async () => {
    const { createServer } = await import("node:net");
    const root = await buildRoot({
      "etc/resolv.conf": { link: "../run/systemd/resolve/stub-resolv.conf" },
      "run/systemd/resolve/stub-resolv.conf": RESOLVED_STUB,
    });
    roots.push(root);
    // A socket file nobody listens on: what a stopped resolved leaves (its runtime directory is preserved).
    const sock = createServer();
    const path = `${root.dir}/run/systemd/resolve/io.systemd.Resolve`;
    await new Promise<void>((r) => sock.listen(path, r));
    const { linkSync, unlinkSync } = await import("node:fs");
    linkSync(path, `${path}.kept`);
    await new Promise<void>((r) => sock.close(() => r()));
    linkSync(`${path}.kept`, path);
    unlinkSync(`${path}.kept`);
    const r = await callTool(server, dnsConfigGet, {}, { env: root.env });
    expect(r.servers).toEqual(["127.0.0.53"]);
    expect(r.warnings).toEqual([
      "the servers behind systemd-resolved's stub are unknown: no uplink file or per-link state",
      "127.0.0.53 stub but systemd-resolved is not running: lookups will fail",
    ]);
  });

  it("systemd-resolved's uplink file: its servers are what glibc asks, no stub", async () => {
    expect(await getIn(layouts.resolvedUplink)).toEqual({
      ...NOBODY,
      mode: "resolved",
      servers: UPSTREAM,
      search: ["corp.example", "lab.test"],
      managed_by: "systemd-resolved",
      decided_by: "path",
      points_to: "/run/systemd/resolve/resolv.conf",
      read: "/run/systemd/resolve/resolv.conf",
      resolved_view: "uplink",
      nameservers: UPSTREAM,
      upstream: UPSTREAM,
      upstream_from: "/run/systemd/resolve/resolv.conf",
      summary: "resolved (systemd-resolved): 192.0.2.53, 2001:db8::53; search corp.example lab.test",
    });
  });

  it("resolvconf: followed through /etc/resolvconf/run to /run/resolvconf", async () => {
    expect(await getIn(layouts.resolvconf)).toEqual({
      ...NOBODY,
      mode: "resolvconf",
      servers: ["192.0.2.1", "192.0.2.2"],
      search: ["home.example"],
      managed_by: "resolvconf",
      decided_by: "path",
      points_to: "/etc/resolvconf/run/resolv.conf",
      read: "/run/resolvconf/resolv.conf",
      nameservers: ["192.0.2.1", "192.0.2.2"],
      summary: "resolvconf (resolvconf): 192.0.2.1, 192.0.2.2; search home.example",
    });
  });

  it("NetworkManager's own file", async () => {
    expect(await getIn(layouts.networkManager)).toEqual({
      ...NOBODY,
      servers: ["192.0.2.1", "2001:db8::1"],
      search: ["home.example"],
      managed_by: "NetworkManager",
      decided_by: "path",
      points_to: "../run/NetworkManager/resolv.conf",
      read: "/run/NetworkManager/resolv.conf",
      nameservers: ["192.0.2.1", "2001:db8::1"],
      summary: "other (NetworkManager): 192.0.2.1, 2001:db8::1; search home.example",
    });
  });

  it("NetworkManager's header on a plain file, naming resolved's stub while resolved never ran", async () => {
    const r = await getIn({
      "etc/resolv.conf": "# Generated by NetworkManager\nsearch home.example\nnameserver 127.0.0.53\n",
      "run/NetworkManager/no-stub-resolv.conf": NETWORK_MANAGER,
    });
    expect(r).toEqual({
      ...NOBODY,
      mode: "resolved",
      servers: ["192.0.2.1", "2001:db8::1"],
      search: ["home.example"],
      managed_by: "NetworkManager",
      decided_by: "header",
      resolved_view: "foreign",
      nameservers: ["127.0.0.53"],
      stub: ["127.0.0.53"],
      upstream: ["192.0.2.1", "2001:db8::1"],
      upstream_from: "/run/NetworkManager/no-stub-resolv.conf",
      warnings: ["127.0.0.53 stub but systemd-resolved is not running: lookups will fail"],
      summary:
        // The kernel cuts every summary at 160 characters.
        "resolved (NetworkManager) via stub 127.0.0.53: 192.0.2.1, 2001:db8::1; search home.example; 1 warning: 127.0.0.53 stub but systemd-resolved is not running: loo…",
    });
  });

  it("a hand-written file with comments, options, a bad address, an indented line and four nameservers", async () => {
    expect(await getIn({ "etc/resolv.conf": HAND_WRITTEN })).toEqual({
      ...NOBODY,
      servers: ["192.0.2.10", "fe80::1%eth0", "192.0.2.11"],
      search: ["a.example", "b.example"],
      nameservers: ["192.0.2.10", "fe80::1%eth0", "192.0.2.11", "192.0.2.12"],
      options: { ...DEFAULT_OPTIONS, ndots: 3, timeout: 2, attempts: 5, rotate: true, single_request_reopen: true },
      options_raw: ["ndots:3", "timeout:2", "attempts:9", "rotate", "single-request-reopen", "frobnicate"],
      warnings: [
        "4 nameservers: glibc uses only the first 3",
        'unknown option "frobnicate": glibc ignores it',
        "indented line 7: glibc ignores a keyword not in the first column",
        "nameserver not an IP address, ignored: dns.example",
      ],
      summary:
        "other (none): 192.0.2.10, fe80::1%eth0, 192.0.2.11; search a.example b.example; 4 warnings: 4 nameservers: glibc uses only the first 3",
    });
  });

  it("a copy of resolved's stub file: its header names the manager, and the copy is called out", async () => {
    const r = await getIn({
      "etc/resolv.conf": RESOLVED_STUB,
      "run/systemd/resolve/resolv.conf": layouts.resolvedStub["run/systemd/resolve/resolv.conf"],
      "run/systemd/resolve/stub-resolv.conf": RESOLVED_STUB,
    });
    expect(r).toMatchObject({
      mode: "resolved",
      managed_by: "systemd-resolved",
      decided_by: "header",
      resolved_view: "stub",
      read: "/etc/resolv.conf",
      servers: UPSTREAM,
      warnings: ["a copy of systemd-resolved's file, not a symlink to it: it will not follow changes"],
    });
  });

  it.each([
    ["; generated by /usr/sbin/dhclient-script", "dhclient", "other"],
    ["# Generated by dhcpcd from eth0.dhcp", "dhcpcd", "other"],
    ["# Generated by resolvconf", "resolvconf", "resolvconf"],
    ["# Generated by NetworkManager", "NetworkManager", "other"],
    ["# written by hand, 2026", "none", "other"],
  ])("a plain file headed %j is managed by %s (mode %s)", async (header, managedBy, mode) => {
    const r = await getIn({ "etc/resolv.conf": `${header}\nnameserver 192.0.2.1\n` });
    expect([r.managed_by, r.decided_by, r.mode, r.servers]).toEqual([
      managedBy,
      managedBy === "none" ? "none" : "header",
      mode,
      ["192.0.2.1"],
    ]);
  });

  it("resolved's static file (/usr/lib/systemd/resolv.conf): the stub, with the upstream servers behind it", async () => {
    const r = await getIn({
      "etc/resolv.conf": { link: "../usr/lib/systemd/resolv.conf" },
      "usr/lib/systemd/resolv.conf":
        "# This is a static resolv.conf file for connecting local clients to\n# systemd-resolved via its DNS stub listener on 127.0.0.53.\nnameserver 127.0.0.53\noptions edns0 trust-ad\nsearch .\n",
      "run/systemd/resolve/resolv.conf": layouts.resolvedStub["run/systemd/resolve/resolv.conf"],
      "run/systemd/resolve/stub-resolv.conf": RESOLVED_STUB,
    });
    expect(r).toMatchObject({
      mode: "resolved",
      managed_by: "systemd-resolved",
      decided_by: "path",
      resolved_view: "static",
      read: "/usr/lib/systemd/resolv.conf",
      servers: UPSTREAM,
      search: ["."],
      warnings: [],
    });
  });

  it("a broken symlink to resolved's stub: what was meant, no servers, and why", async () => {
    expect(await getIn({ "etc/resolv.conf": { link: "../run/systemd/resolve/stub-resolv.conf" } })).toEqual({
      ...NOBODY,
      mode: "resolved",
      managed_by: "systemd-resolved",
      decided_by: "path",
      points_to: "../run/systemd/resolve/stub-resolv.conf",
      read: null,
      resolved_view: "stub",
      warnings: [
        "/etc/resolv.conf is a broken symlink (→ ../run/systemd/resolve/stub-resolv.conf): glibc asks 127.0.0.1",
        "127.0.0.53 stub but systemd-resolved is not running: lookups will fail",
      ],
      summary:
        "resolved (systemd-resolved): no servers; 2 warnings: /etc/resolv.conf is a broken symlink (→ ../run/systemd/resolve/stub-resolv.conf): glibc asks 127.0.0.1",
    });
  });

  it("an empty file and a missing one", async () => {
    expect(await getIn({ "etc/resolv.conf": "" })).toEqual({
      ...NOBODY,
      warnings: ["no nameserver lines: glibc falls back to 127.0.0.1"],
      summary: "other (none): no servers; 1 warning: no nameserver lines: glibc falls back to 127.0.0.1",
    });
    expect(await getIn({ etc: { dir: true } })).toEqual({
      ...NOBODY,
      read: null,
      warnings: ["/etc/resolv.conf does not exist: glibc asks 127.0.0.1"],
      summary: "other (none): no servers; 1 warning: /etc/resolv.conf does not exist: glibc asks 127.0.0.1",
    });
  });

  it("a symlink climbing out (../../../etc/passwd) stays in the root: the root's own file is what is read", async () => {
    const r = await getIn({
      "etc/resolv.conf": { link: "../../../etc/passwd" },
      // Planted in the root: had the host's /etc/passwd been read, there would be no nameserver.
      "etc/passwd": "nameserver 192.0.2.77\n",
    });
    expect(r).toEqual({
      ...NOBODY,
      servers: ["192.0.2.77"],
      points_to: "../../../etc/passwd",
      read: "/etc/passwd",
      nameservers: ["192.0.2.77"],
      warnings: ["a symlink climbs above the root: held at the root, as chroot does"],
      summary: "other (none): 192.0.2.77; 1 warning: a symlink climbs above the root: held at the root, as chroot does",
    });
  });

  it("an absolute symlink (/etc/shadow) is the root's /etc/shadow, never the host's", async () => {
    const r = await getIn({ "etc/resolv.conf": { link: "/etc/shadow" } });
    expect(r).toEqual({
      ...NOBODY,
      points_to: "/etc/shadow",
      read: null,
      warnings: ["/etc/resolv.conf is a broken symlink (→ /etc/shadow): glibc asks 127.0.0.1"],
      summary:
        "other (none): no servers; 1 warning: /etc/resolv.conf is a broken symlink (→ /etc/shadow): glibc asks 127.0.0.1",
    });
  });

  it("a symlink loop, a directory, a FIFO: each a warning, no hang", async () => {
    const loop = await getIn({ "etc/resolv.conf": { link: "a" }, "etc/a": { link: "b" }, "etc/b": { link: "a" } });
    expect(loop.warnings).toEqual(["/etc/resolv.conf is a symlink loop: glibc asks 127.0.0.1"]);
    const dir = await getIn({ "etc/resolv.conf": { dir: true } });
    expect(dir.warnings).toEqual(["/etc/resolv.conf is not a regular file: glibc asks 127.0.0.1"]);
    const root = await buildRoot({ etc: { dir: true } });
    roots.push(root);
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [`${root.dir}/etc/resolv.conf`]);
    const fifo = await callTool(server, dnsConfigGet, {}, { env: root.env });
    expect(fifo.warnings).toEqual(["/etc/resolv.conf is not a regular file: glibc asks 127.0.0.1"]);
  });

  it("regression (issue 18): a symlink to a FIFO is not a regular file, not a broken symlink", async () => {
    const root = await buildRoot({ "etc/resolv.conf": { link: "../run/resolv.fifo" }, run: { dir: true } });
    roots.push(root);
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [`${root.dir}/run/resolv.fifo`]);
    const fifo = await callTool(server, dnsConfigGet, {}, { env: root.env });
    expect(fifo.warnings).toEqual([
      "/etc/resolv.conf is not a regular file (→ ../run/resolv.fifo): glibc asks 127.0.0.1",
    ]);
  });

  it("a search list past the old glibc limits, and a file past 64 KiB read only so far", async () => {
    const domains = Array.from({ length: 7 }, (_, i) => `d${i}.example`);
    const r = await getIn({ "etc/resolv.conf": `nameserver 192.0.2.1\nsearch ${domains.join(" ")}\n` });
    expect(r.search).toEqual(domains);
    expect(r.warnings).toEqual(["search list over 6 domains / 256 chars (7, 76): glibc before 2.26 drops the rest"]);
    const big = await getIn({
      "etc/resolv.conf": `nameserver 192.0.2.1\n${"#".repeat(70_000)}\nnameserver 192.0.2.2\n`,
    });
    expect(big.nameservers).toEqual(["192.0.2.1"]);
    expect(big.warnings).toEqual(["resolv.conf is larger than 64 KiB: only its start was read"]);
  });

  it("limit cuts each list and counts what it left out", async () => {
    const r = await getIn(layouts.resolvedStub, { limit: 1 });
    expect(r).toMatchObject({
      servers: ["192.0.2.53"],
      search: ["corp.example"],
      nameservers: ["127.0.0.53"],
      upstream: ["192.0.2.53"],
      links: [LINK_2],
      truncated: true,
      omitted: 4,
    });
  });

  it("a DNS_CONFIG_ROOT that is not a directory is E_UNSUPPORTED, naming it", async () => {
    await expect(
      callTool(server, dnsConfigGet, {}, { env: { DNS_CONFIG_ROOT: "/nonexistent/rn-root" } }),
    ).rejects.toMatchObject({ code: "E_UNSUPPORTED", message: expect.stringContaining("/nonexistent/rn-root") });
  });
});

const skip = netnsSkipReason();

describe.skipIf(skip)(`dns_config_get live in a network namespace${skip ? ` (skipped: ${skip})` : ""}`, () => {
  it("reports exactly the resolv.conf `ip netns exec` mounted over /etc/resolv.conf", async () => {
    const lab = createNetnsLab();
    try {
      const ns = lab.addNs();
      lab.etcFile(
        ns,
        "resolv.conf",
        "# written by the test\nnameserver 192.0.2.41\nnameserver 2001:db8::41\nsearch ns.test lab.example\noptions ndots:2 edns0\n",
      );
      const { nsAddr } = lab.linkToRoot(ns);
      // No DNS_CONFIG_ROOT: the server reads the real / that `ip netns exec` set up for it.
      const served = await lab.serve(ns, "dns-config", { env: { HOST: nsAddr } });
      const client = createClient(served.url, { token: served.token });
      const r = await client.call<Result>("dns_config_get");
      expect(r).toMatchObject({
        mode: "other",
        servers: ["192.0.2.41", "2001:db8::41"],
        search: ["ns.test", "lab.example"],
        managed_by: "none",
        points_to: null,
        read: "/etc/resolv.conf",
        nameservers: ["192.0.2.41", "2001:db8::41"],
        options: { ...DEFAULT_OPTIONS, ndots: 2, edns0: true },
        options_raw: ["ndots:2", "edns0"],
        warnings: [],
      });
    } finally {
      await lab.cleanup();
    }
  });
});
