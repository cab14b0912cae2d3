/**
 * Regression: the proxy and webcheck allowlists were bypassed through sibling servers. With
 * OUTBOUND_ALLOW=127.0.0.1, `sso_probe http://127.0.0.1:7101/sse/http_check?url=http://10.0.0.5/` made network
 * (which has no allowlist) fetch a LAN host. RoadNerd's own ports on this machine are refused unless
 * OUTBOUND_ALLOW names that host:port.
 */
import { describe, expect, it, vi } from "vitest";
import { createOutboundPolicy } from "../../src/outbound/index.ts";
import { isOwnPort, ROADNERD_PORT_BLOCK } from "../../src/outbound/own-ports.ts";
import { thrown } from "../../src/testing/thrown.ts";

const policy = (allow: string[] = []) => createOutboundPolicy({ allow, deny: [] });

describe("RoadNerd's own ports are never a target unless named", () => {
  it.each([
    ["127.0.0.1", 7101],
    ["127.0.0.2", 7105],
    ["::1", 7103],
    ["::ffff:127.0.0.1", 7101],
    ["0.0.0.0", 7100],
  ])("%s port %i is refused, even with OUTBOUND_ALLOW=127.0.0.0/8,::1", (ip, port) => {
    for (const p of [policy(), policy(["127.0.0.0/8", "::1", "0.0.0.0"])]) {
      expect(thrown(() => p.checkAddress(ip, undefined, port))).toMatchObject({
        code: "E_FORBIDDEN",
        message: expect.stringContaining("a RoadNerd server's port"),
      });
    }
  });

  it("a name resolving to loopback is refused on those ports too", () => {
    expect(thrown(() => policy(["localhost"]).checkAddress("127.0.0.1", "localhost", 7104))).toMatchObject({
      code: "E_FORBIDDEN",
    });
  });

  it("a port this process listens on (roadnerd up: every server in one process) is refused", () => {
    const other = policy();
    expect(() => other.checkAddress("127.0.0.1", undefined, 45_678)).not.toThrow();
    policy().setSelf("127.0.0.1", 45_678);
    expect(isOwnPort(45_678)).toBe(true);
    expect(thrown(() => other.checkAddress("127.0.0.1", undefined, 45_678))).toMatchObject({ code: "E_FORBIDDEN" });
  });

  it("OUTBOUND_ALLOW=host:port opens exactly that port of that host", () => {
    const p = policy(["127.0.0.1:7101", "[::1]:7103", "localhost:7104"]);
    expect(() => p.checkAddress("127.0.0.1", undefined, 7101)).not.toThrow();
    expect(() => p.checkAddress("::1", undefined, 7103)).not.toThrow();
    expect(() => p.checkAddress("127.0.0.1", "localhost", 7104)).not.toThrow();
    expect(() => p.checkTarget("localhost", 7104)).not.toThrow();
    expect(thrown(() => p.checkAddress("127.0.0.1", undefined, 7102))).toMatchObject({ code: "E_FORBIDDEN" });
    expect(thrown(() => p.checkAddress("127.0.0.1", undefined, 8080))).toMatchObject({
      message: expect.stringContaining("not in OUTBOUND_ALLOW"),
    });
  });

  it("a port a ROADNERD_<NAME>_PORT variable names (roadnerd up's children inherit them) is refused", () => {
    const env = { ROADNERD_NETWORK_PORT: "7201", ROADNERD_PROXY_OUTBOUND_ALLOW: "127.0.0.1", PORT: "7301" };
    expect(isOwnPort(7201, env)).toBe(true);
    expect(isOwnPort(7301, env)).toBe(false);
    expect(isOwnPort(7201, {})).toBe(false);
    const before = process.env.ROADNERD_STORAGE_PORT;
    process.env.ROADNERD_STORAGE_PORT = "7202";
    try {
      expect(thrown(() => policy(["127.0.0.1"]).checkAddress("127.0.0.1", undefined, 7202))).toMatchObject({
        code: "E_FORBIDDEN",
        message: expect.stringContaining("a RoadNerd server's port"),
      });
      expect(() => policy(["127.0.0.1:7202"]).checkAddress("127.0.0.1", undefined, 7202)).not.toThrow();
    } finally {
      if (before === undefined) delete process.env.ROADNERD_STORAGE_PORT;
      else process.env.ROADNERD_STORAGE_PORT = before;
    }
  });

  it("a variable set after the policy was made counts within a second (process.env is read at most once a second)", () => {
    vi.useFakeTimers({ toFake: ["performance"] });
    const p = policy(["127.0.0.1"]);
    try {
      expect(() => p.checkAddress("127.0.0.1", undefined, 7203)).not.toThrow();
      process.env.ROADNERD_WEBCHECK_PORT = " 7203 ";
      // Read a moment ago: not yet seen.
      expect(() => p.checkAddress("127.0.0.1", undefined, 7203)).not.toThrow();
      vi.advanceTimersByTime(1_001);
      expect(thrown(() => p.checkAddress("127.0.0.1", undefined, 7203))).toMatchObject({ code: "E_FORBIDDEN" });
      delete process.env.ROADNERD_WEBCHECK_PORT;
      vi.advanceTimersByTime(1_001);
      expect(() => p.checkAddress("127.0.0.1", undefined, 7203)).not.toThrow();
    } finally {
      delete process.env.ROADNERD_WEBCHECK_PORT;
      vi.useRealTimers();
    }
  });

  it("other loopback ports and remote hosts on those port numbers are unchanged", () => {
    expect(() => policy().checkAddress("127.0.0.1", undefined, 8080)).not.toThrow();
    expect(() => policy().checkAddress("192.0.2.10", undefined, 7101)).not.toThrow();
    expect(ROADNERD_PORT_BLOCK.first).toBe(7100);
  });
});
