/** systemd's state-file formats: server strings with ports, scopes and SNI names; env-style files. */
import { describe, expect, it } from "vitest";
import { parseEnvFile } from "../../src/resolved/links.ts";
import { serverAddress, serverAddresses } from "../../src/resolved/server-address.ts";

describe("systemd server strings", () => {
  it.each([
    ["192.0.2.1", "192.0.2.1"],
    ["192.0.2.1:5353", "192.0.2.1"],
    ["192.0.2.1:53%eth0#dns.example", "192.0.2.1"],
    ["[2001:db8::1]:53%3#dns.example", "2001:db8::1"],
    ["2001:db8::1", "2001:db8::1"],
    ["fe80::1%eth0", "fe80::1"],
    ["dns.example", undefined],
    ["[nope]:53", undefined],
  ])("%s → %s", (word, addr) => {
    expect(serverAddress(word)).toBe(addr);
  });

  it("a list keeps order and drops repeats", () => {
    expect(serverAddresses("192.0.2.1 192.0.2.1:53 junk 2001:db8::2")).toEqual(["192.0.2.1", "2001:db8::2"]);
  });

  it("env-style files: later keys win, quotes dropped, comments skipped", () => {
    expect(parseEnvFile('# private\nDNS=192.0.2.1\nDNS="192.0.2.2"\nlower=x\n')).toEqual({ DNS: "192.0.2.2" });
  });
});
