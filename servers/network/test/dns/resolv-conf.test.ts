import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FALLBACK_NAMESERVER, parseResolvConf, readDefaultResolver } from "../../src/dns/resolv-conf.ts";

const fixture = (name: string) => new URL(`../fixtures/resolv/${name}`, import.meta.url).pathname;
const parse = (name: string) => parseResolvConf(readFileSync(fixture(name), "utf8"));

describe("parseResolvConf", () => {
  it("reads systemd-resolved's stub file", () => {
    expect(parse("systemd-resolved.conf")).toEqual({
      nameservers: ["127.0.0.53"],
      search: ["lan"],
      options: ["edns0", "trust-ad"],
    });
  });

  it("keeps IPv6 and zone ids, and only the first three nameservers as glibc does", () => {
    expect(parse("network-manager.conf")).toEqual({
      nameservers: ["192.0.2.53", "2001:db8::53", "fe80::1%wlan0"],
      search: ["corp.example.com", "example.com"],
      options: ["timeout:2", "attempts:3"],
    });
  });

  it("skips comments of both kinds, bad addresses, and cuts trailing comments", () => {
    expect(parse("messy.conf")).toEqual({
      nameservers: ["192.0.2.7", "192.0.2.9"],
      search: ["example.org"],
      options: ["rotate", "ndots:2"],
    });
  });

  it("finds no nameserver when there is none", () => {
    expect(parse("no-nameserver.conf").nameservers).toEqual([]);
    expect(parseResolvConf("").nameservers).toEqual([]);
  });
});

describe("readDefaultResolver", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it("takes the first nameserver of the file", async () => {
    expect(await readDefaultResolver(fixture("network-manager.conf"))).toEqual({
      address: "192.0.2.53",
      from: "resolv_conf",
    });
  });

  it("falls back to 127.0.0.1 like glibc when the file lists none or is missing", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rn-resolv-"));
    dirs.push(dir);
    await writeFile(join(dir, "empty.conf"), "search example.net\n");
    expect(FALLBACK_NAMESERVER).toBe("127.0.0.1");
    expect(await readDefaultResolver(join(dir, "empty.conf"))).toEqual({ address: "127.0.0.1", from: "fallback" });
    expect(await readDefaultResolver(join(dir, "missing.conf"))).toEqual({ address: "127.0.0.1", from: "fallback" });
  });
});
