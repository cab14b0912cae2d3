import { existsSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { callTool } from "@roadnerd/conventions/testing";
import { afterEach, describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";
import { resolvedStatus } from "../../src/tools/resolved-status.ts";
import { type BuiltRoot, buildRoot, type RootSpec } from "../helpers/build-root.ts";
import { RESOLVED_STUB } from "../helpers/layouts.ts";
import { leftoverSocket } from "../helpers/races.ts";

const roots: BuiltRoot[] = [];
const listeners: Server[] = [];
afterEach(async () => {
  for (const l of listeners.splice(0)) await new Promise<void>((r) => l.close(() => r()));
  for (const r of roots.splice(0)) await r.remove();
});

async function statusIn(spec: RootSpec, prepare?: (dir: string) => Promise<void>) {
  const root = await buildRoot(spec);
  roots.push(root);
  await prepare?.(root.dir);
  return callTool(server, resolvedStatus, {}, { env: root.env });
}

const VARLINK = "run/systemd/resolve/io.systemd.Resolve";

describe("resolved_status on this host", () => {
  it("says plainly that systemd-resolved is neither installed nor running", async () => {
    // The facts this host must keep: nothing of systemd-resolved is installed (the project never installs it).
    expect(existsSync("/run/systemd/resolve")).toBe(false);
    expect(existsSync("/usr/lib/systemd/systemd-resolved") || existsSync("/lib/systemd/systemd-resolved")).toBe(false);
    expect(existsSync("/etc/systemd/resolved.conf")).toBe(false);
    expect(await callTool(server, resolvedStatus, {})).toEqual({
      running: false,
      evidence: "no /run/systemd/resolve: systemd-resolved has not run since boot",
      installed: false,
      binary: null,
      dns: [],
      domains: [],
      config_files: [],
      source: "files",
      summary: "systemd-resolved not installed, not running; DNSSEC default; FallbackDNS default; 0 config file(s)",
    });
  });
});

describe("resolved_status in built roots", () => {
  it("resolved.conf alone: DNSSEC, FallbackDNS, DNS, Domains and the rest as written", async () => {
    const r = await statusIn({
      "usr/lib/systemd/systemd-resolved": "#!/bin/false\n",
      "etc/systemd/resolved.conf": [
        "#  This file is part of systemd.",
        "[Resolve]",
        "DNS=192.0.2.53 2001:db8::53#dns.example",
        "FallbackDNS=198.51.100.1 \\",
        "  198.51.100.2",
        "Domains=corp.example ~.",
        "DNSSEC=allow-downgrade",
        "DNSOverTLS=opportunistic",
        "LLMNR=no",
        "MulticastDNS=no",
        "DNSStubListener=yes",
        "[Other]",
        "DNSSEC=yes",
        "",
      ].join("\n"),
    });
    expect(r).toEqual({
      running: false,
      evidence: "no /run/systemd/resolve: systemd-resolved has not run since boot",
      installed: true,
      binary: "/usr/lib/systemd/systemd-resolved",
      dnssec: "allow-downgrade",
      fallback_dns: ["198.51.100.1", "198.51.100.2"],
      dns: ["192.0.2.53", "2001:db8::53#dns.example"],
      domains: ["corp.example", "~."],
      dns_over_tls: "opportunistic",
      dns_stub_listener: "yes",
      llmnr: "no",
      multicast_dns: "no",
      config_files: ["/etc/systemd/resolved.conf"],
      source: "files",
      summary:
        "systemd-resolved installed, not running; DNSSEC=allow-downgrade; FallbackDNS=198.51.100.1 198.51.100.2; 1 config file(s)",
    });
  });

  it("drop-ins: name order, /etc hides /run hides /usr/lib, an empty FallbackDNS= clears the list", async () => {
    const r = await statusIn({
      "etc/systemd/resolved.conf": "[Resolve]\nDNSSEC=yes\nFallbackDNS=198.51.100.1\nDNS=192.0.2.1\n",
      // Hidden by /etc's 50-corp.conf of the same name: never read.
      "usr/lib/systemd/resolved.conf.d/50-corp.conf": "[Resolve]\nDNSSEC=allow-downgrade\n",
      "usr/lib/systemd/resolved.conf.d/10-vendor.conf": "[Resolve]\nDNS=192.0.2.2\n",
      "run/systemd/resolved.conf.d/60-nofallback.conf": "[Resolve]\nFallbackDNS=\n",
      "etc/systemd/resolved.conf.d/50-corp.conf": "[Resolve]\nDNSSEC=no\nDomains=corp.example\n",
      "etc/systemd/resolved.conf.d/README": "[Resolve]\nDNSSEC=yes\n",
    });
    expect(r).toMatchObject({
      dnssec: "no",
      fallback_dns: [],
      dns: ["192.0.2.1", "192.0.2.2"],
      domains: ["corp.example"],
      config_files: [
        "/etc/systemd/resolved.conf",
        "/usr/lib/systemd/resolved.conf.d/10-vendor.conf",
        "/etc/systemd/resolved.conf.d/50-corp.conf",
        "/run/systemd/resolved.conf.d/60-nofallback.conf",
      ],
      summary: "systemd-resolved not installed, not running; DNSSEC=no; FallbackDNS=(none); 4 config file(s)",
    });
  });

  it("running: a varlink socket that accepts", async () => {
    const r = await statusIn({ "run/systemd/resolve/stub-resolv.conf": RESOLVED_STUB }, async (dir) => {
      const l = createServer((s) => s.destroy());
      await new Promise<void>((ok) => l.listen(`${dir}/${VARLINK}`, ok));
      listeners.push(l);
    });
    expect(r).toMatchObject({ running: true, evidence: "/run/systemd/resolve/io.systemd.Resolve accepts connections" });
  });

  it("not running: a varlink socket left by a process that died", async () => {
    const r = await statusIn({ "run/systemd/resolve/stub-resolv.conf": RESOLVED_STUB }, async (dir) => {
      // A listener killed with SIGKILL leaves its socket file behind, as a crashed daemon does.
      await leftoverSocket(`${dir}/${VARLINK}`);
    });
    expect(r).toMatchObject({
      running: false,
      evidence: "/run/systemd/resolve/io.systemd.Resolve is left over: nothing listens on it",
    });
  });

  it("the stub file without a socket: running, said to be unconfirmed; the directory alone: not running", async () => {
    expect(await statusIn({ "run/systemd/resolve/stub-resolv.conf": RESOLVED_STUB })).toMatchObject({
      running: true,
      evidence:
        "/run/systemd/resolve/stub-resolv.conf is present but /run/systemd/resolve/io.systemd.Resolve could not confirm it",
    });
    expect(await statusIn({ "run/systemd/resolve": { dir: true } })).toMatchObject({
      running: false,
      evidence: "/run/systemd/resolve holds no stub file or varlink socket",
    });
  });

  it("a DNS_CONFIG_ROOT that is not a directory is E_UNSUPPORTED", async () => {
    await expect(
      callTool(server, resolvedStatus, {}, { env: { DNS_CONFIG_ROOT: "/nonexistent/rn-root" } }),
    ).rejects.toMatchObject({ code: "E_UNSUPPORTED" });
  });
});
