// The IPv4 neighbour table as procfs prints it, recorded in a network namespace (fixtures/proc-net-arp.txt):
// a0's peer 192.0.2.1 answered ARP; nothing answers 198.51.100.1 on b0 (netlink said INCOMPLETE, then FAILED:
// the file prints both the same).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { arpState } from "../../src/parse/proc-arp.ts";

const arp = readFileSync(join(import.meta.dirname, "../fixtures/proc-net-arp.txt"), "utf8");

describe("/proc/net/arp (the IPv4 neighbour table)", () => {
  it("an answered neighbour is known", () => {
    expect(arpState(arp, "192.0.2.1", "a0")).toBe("known");
  });

  it("a neighbour asked for and never answered is incomplete", () => {
    expect(arpState(arp, "198.51.100.1", "b0")).toBe("incomplete");
  });

  it("no entry, or an entry on another device, is none", () => {
    expect(arpState(arp, "203.0.113.1", "a0")).toBe("none");
    expect(arpState(arp, "192.0.2.1", "b0")).toBe("none");
    expect(arpState(arp.split("\n")[0] ?? "", "192.0.2.1", "a0")).toBe("none");
  });

  it("a permanent entry (ATF_COM | ATF_PERM) is known", () => {
    const perm = `${arp.split("\n")[0]}\n192.0.2.9        0x1         0x6         02:52:4e:00:00:99     *        a0\n`;
    expect(arpState(perm, "192.0.2.9", "a0")).toBe("known");
  });
});
