/** `roadnerd up`'s per-server settings: ROADNERD_<SERVER>_<VAR> and --set, one server's alone. */
import { describe, expect, it } from "vitest";
import { serverSettings } from "../src/up/settings.ts";

const SERVERS = [
  { name: "webcheck", keys: ["WEBCHECK_ARTIFACT_DIR"] },
  { name: "dns-config", keys: [] },
  { name: "network", keys: [] },
];

describe("serverSettings", () => {
  it("gives OUTBOUND_ALLOW to webcheck alone, from the env, with dashes as underscores", () => {
    const s = serverSettings(SERVERS, [], {
      ROADNERD_WEBCHECK_OUTBOUND_ALLOW: "127.0.0.1",
      ROADNERD_DNS_CONFIG_PORT: "7204",
      OUTBOUND_ALLOW: "10.0.0.0/8",
    });
    expect(s.get("webcheck")).toEqual({ OUTBOUND_ALLOW: "127.0.0.1" });
    expect(s.get("dns-config")).toEqual({ PORT: "7204" });
    expect(s.get("network")).toEqual({});
  });

  it("lets --set win over the env, and takes a server's own variables", () => {
    const s = serverSettings(SERVERS, ["webcheck.OUTBOUND_ALLOW=example.test", "webcheck.WEBCHECK_ARTIFACT_DIR=/x"], {
      ROADNERD_WEBCHECK_OUTBOUND_ALLOW: "127.0.0.1",
    });
    expect(s.get("webcheck")).toEqual({ OUTBOUND_ALLOW: "example.test", WEBCHECK_ARTIFACT_DIR: "/x" });
  });

  it("refuses what would move a server off loopback or is not a variable of that server", () => {
    expect(() => serverSettings(SERVERS, ["network.HOST=0.0.0.0"], {})).toThrow(/network takes .*PORT/);
    expect(() => serverSettings(SERVERS, ["network.WEBCHECK_ARTIFACT_DIR=/x"], {})).toThrow(/network takes/);
    expect(() => serverSettings(SERVERS, ["nope.PORT=1"], {})).toThrow(/unknown server \(known: webcheck/);
    expect(() => serverSettings(SERVERS, ["network:PORT"], {})).toThrow(/expected <server>.<VAR>=<value>/);
    // The env is read only for variables a server takes: HOST there is ignored, not applied.
    expect(serverSettings(SERVERS, [], { ROADNERD_NETWORK_HOST: "0.0.0.0" }).get("network")).toEqual({});
  });
});
