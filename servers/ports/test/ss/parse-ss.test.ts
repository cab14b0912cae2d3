/** `ss -Hltnup` output recorded on this machine beside the /proc/net fixtures (same sockets), parsed exactly. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseSs, parseSsLine } from "../../src/ss/parse-ss.ts";

const recorded = readFileSync(new URL("../fixtures/ss-ltnup.txt", import.meta.url), "utf8");

describe("parseSs", () => {
  it("reads proto, address, port and holders; `*` is the dual-stack IPv6 wildcard", () => {
    expect(parseSs(recorded)).toEqual([
      { proto: "udp", address: "0.0.0.0", port: 5353, local: "0.0.0.0:5353", pids: [30136] },
      { proto: "udp6", address: "::1", port: 5354, local: "[::1]:5354", pids: [30136] },
      { proto: "tcp", address: "127.0.0.1", port: 8080, local: "127.0.0.1:8080", pids: [30136] },
      { proto: "tcp6", address: "::1", port: 9090, local: "[::1]:9090", pids: [30136] },
      { proto: "tcp6", address: "::", port: 8443, local: "[::]:8443", pids: [30136] },
      {
        proto: "tcp6",
        address: "::ffff:127.0.0.2",
        port: 9091,
        local: "[::ffff:127.0.0.2]:9091",
        pids: [30136],
      },
    ]);
  });

  it("drops a bound interface, merges a socket shared by several processes, and keeps one with no holder", () => {
    expect(parseSsLine('udp UNCONN 0 0 127.0.0.53%lo:53 0.0.0.0:* users:(("systemd-resolve",pid=612,fd=13))')).toEqual({
      proto: "udp",
      address: "127.0.0.53",
      port: 53,
      local: "127.0.0.53:53",
      pids: [612],
    });
    expect(
      parseSsLine(
        'tcp LISTEN 0 511 0.0.0.0:80 0.0.0.0:* users:(("nginx",pid=902,fd=6),("nginx",pid=901,fd=6),("nginx",pid=902,fd=7))',
      ),
    ).toMatchObject({ local: "0.0.0.0:80", pids: [901, 902] });
    // Recorded on this machine's own namespace: a listener whose process ss cannot see.
    expect(parseSsLine("tcp LISTEN 0      128    0.0.0.0:2024 0.0.0.0:*")).toEqual({
      proto: "tcp",
      address: "0.0.0.0",
      port: 2024,
      local: "0.0.0.0:2024",
      pids: [],
    });
    expect(parseSsLine("[fe80::1]%eth0:546")).toBeNull();
    expect(parseSsLine("")).toBeNull();
  });
});
