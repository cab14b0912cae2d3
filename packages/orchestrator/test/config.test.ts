/** The orchestrator's env: defaults, refusals, remote server URLs, and what a spawned server inherits. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EXIT } from "../src/cli/exit-codes.ts";
import { runCli } from "../src/cli/main.ts";
import { DEFAULT_IDLE_MS, loadOrchestratorConfig, remoteServersFromEnv } from "../src/config.ts";
import { remoteServers } from "../src/orchestrator.ts";
import { serverEnv } from "../src/server-env.ts";

describe("orchestrator config", () => {
  it("defaults: rules planner, 3b profile, idle and attach times", () => {
    expect(loadOrchestratorConfig({})).toMatchObject({
      ROADNERD_PLANNER: "rules",
      ROADNERD_MODEL_PROFILE: "3b",
      ROADNERD_IDLE_MS: DEFAULT_IDLE_MS,
      ROADNERD_ATTACH_TIMEOUT_MS: 10_000,
      ROADNERD_PROBE_HOST: "example.com",
    });
  });

  it("a bad value is refused with the variable's name", () => {
    expect(() => loadOrchestratorConfig({ ROADNERD_PLANNER: "gpt" })).toThrow(/ROADNERD_PLANNER/);
    expect(() => loadOrchestratorConfig({ ROADNERD_IDLE_MS: "-1" })).toThrow(/ROADNERD_IDLE_MS/);
  });

  it("ALLOWED_ORIGINS with a wildcard: the gateway refuses to start (exit 2), naming the entry", async () => {
    expect(() => loadOrchestratorConfig({ ALLOWED_ORIGINS: "https://*.corp.example" })).toThrow(
      /ALLOWED_ORIGINS: "https:\/\/\*\.corp\.example": wildcards are not supported/,
    );
    const env = { ALLOWED_ORIGINS: "*", ROADNERD_SERVERS_FILE: "/nonexistent" };
    expect(await runCli(["mcp", "--http", "--port", "0"], env)).toBe(EXIT.usage);
  });

  it("ROADNERD_SERVER_<NAME>_URL and _TOKEN, names upper-cased with - as _", () => {
    const env = {
      ROADNERD_SERVER_DNS_CONFIG_URL: "http://127.0.0.1:7104",
      ROADNERD_SERVER_NETWORK_URL: "http://127.0.0.1:7101",
      ROADNERD_SERVER_NETWORK_TOKEN: "tok",
    };
    expect(remoteServersFromEnv(["network", "dns-config", "ports"], env)).toEqual(
      new Map([
        ["network", { url: "http://127.0.0.1:7101", token: "tok" }],
        ["dns-config", { url: "http://127.0.0.1:7104" }],
      ]),
    );
  });
});

describe("remoteServers: a servers file and the env", () => {
  it("reads {name: url | {url, token}}, ignores unknown names, and the env wins", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rn-servers-"));
    try {
      const file = join(dir, "servers.json");
      await writeFile(
        file,
        JSON.stringify({
          network: "http://127.0.0.1:7101",
          ports: { url: "http://127.0.0.1:7103", token: "ports-token" },
          nonesuch: "http://127.0.0.1:9999",
        }),
      );
      const config = loadOrchestratorConfig({ ROADNERD_SERVERS_FILE: file });
      const env = { ROADNERD_SERVER_NETWORK_URL: "http://127.0.0.1:17101" };
      expect(remoteServers(config, ["network", "ports", "storage"], env)).toEqual(
        new Map([
          ["network", { url: "http://127.0.0.1:17101" }],
          ["ports", { url: "http://127.0.0.1:7103", token: "ports-token" }],
        ]),
      );
      await writeFile(file, JSON.stringify({ network: "not a url" }));
      expect(() => remoteServers(config, ["network"], {})).toThrow();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

// Regression (sealed attacker review F2): ROADNERD_SERVER_<NAME>_URL/_TOKEN and ROADNERD_SERVERS_FILE sent their
// bearer token over http:// to another machine unchecked (the hosts file already refused it): the same rule now.
describe("a configured server's token over plain http:// beyond loopback", () => {
  const TOKEN = "a-server-token-of-24-chars";
  const refusal = (config: ReturnType<typeof loadOrchestratorConfig>, env: NodeJS.ProcessEnv) => {
    try {
      remoteServers(config, ["network", "dns-config"], env);
    } catch (err) {
      expect(err).toMatchObject({ code: "E_USAGE" });
      return String(Reflect.get(Object(err), "message"));
    }
    throw new Error("accepted");
  };

  it("ROADNERD_SERVER_<NAME>_URL with _TOKEN: refused, naming the server and both ways out, whatever the case", () => {
    for (const url of ["http://10.0.0.2:7104", "HTTP://10.0.0.2:7104"]) {
      const env = { ROADNERD_SERVER_DNS_CONFIG_URL: url, ROADNERD_SERVER_DNS_CONFIG_TOKEN: TOKEN };
      expect(refusal(loadOrchestratorConfig({}), env)).toBe(
        `ROADNERD_SERVER_DNS_CONFIG_URL (with _TOKEN): ${url} is plain http://, so the dns-config server's token would cross the network in clear; use https:// (with its ca), or set ALLOW_PLAINTEXT=1 where the network is private`,
      );
    }
  });

  it("ROADNERD_SERVERS_FILE: refused, naming the file and the server", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rn-servers-"));
    try {
      const file = join(dir, "servers.json");
      await writeFile(file, JSON.stringify({ network: { url: "http://10.0.0.2:7101", token: TOKEN } }));
      expect(refusal(loadOrchestratorConfig({ ROADNERD_SERVERS_FILE: file }), {})).toMatch(
        new RegExp(
          `^ROADNERD_SERVERS_FILE ${file}: network: http://10\\.0\\.0\\.2:7101 is plain http://, so the network server's token would cross the network in clear; use https://.*ALLOW_PLAINTEXT=1`,
        ),
      );
      // ALLOW_PLAINTEXT=1 lets it through, as for the hosts file.
      const allowed = loadOrchestratorConfig({ ROADNERD_SERVERS_FILE: file, ALLOW_PLAINTEXT: "1" });
      expect(remoteServers(allowed, ["network"], {}).get("network")).toEqual({
        url: "http://10.0.0.2:7101",
        token: TOKEN,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  // Regression (sealed attacker review F11): a CR or LF in a token passed the start and broke every call's header.
  it("a token with a CR or LF: refused, naming the variable", () => {
    const env = {
      ROADNERD_SERVER_NETWORK_URL: "https://10.0.0.2:7101",
      ROADNERD_SERVER_NETWORK_TOKEN: `${TOKEN}\r\nX: 1`,
    };
    expect(refusal(loadOrchestratorConfig({}), env)).toBe(
      "ROADNERD_SERVER_NETWORK_URL (with _TOKEN): the token must be printable ASCII without spaces, CR or LF",
    );
  });

  it("accepted over https://, over loopback, without a token, or with ALLOW_PLAINTEXT=1", () => {
    const ok = (env: NodeJS.ProcessEnv, config = loadOrchestratorConfig({})) =>
      remoteServers(config, ["network"], env).get("network")?.url;
    const withToken = (url: string) => ({ ROADNERD_SERVER_NETWORK_URL: url, ROADNERD_SERVER_NETWORK_TOKEN: TOKEN });
    expect(ok(withToken("https://10.0.0.2:7101"))).toBe("https://10.0.0.2:7101");
    expect(ok(withToken("http://127.0.0.1:7101"))).toBe("http://127.0.0.1:7101");
    expect(ok({ ROADNERD_SERVER_NETWORK_URL: "http://10.0.0.2:7101" })).toBe("http://10.0.0.2:7101");
    expect(ok(withToken("http://10.0.0.2:7101"), loadOrchestratorConfig({ ALLOW_PLAINTEXT: "1" }))).toBe(
      "http://10.0.0.2:7101",
    );
  });
});

describe("serverEnv: what a spawned server inherits", () => {
  it("only declared config variables; the attach layer's own and everything else are dropped", () => {
    const env = {
      OUTBOUND_DENY: "10.0.0.0/8",
      CAPTIVE_TEST_URL: "http://plain.example/",
      HOST: "0.0.0.0",
      PORT: "80",
      AUTH_TOKEN: "secret-secret-secret",
      AWS_SECRET_ACCESS_KEY: "nope",
      HOME: "/root",
    };
    expect(serverEnv(["CAPTIVE_TEST_URL"], env)).toEqual({
      OUTBOUND_DENY: "10.0.0.0/8",
      CAPTIVE_TEST_URL: "http://plain.example/",
    });
  });

  it("the user's proxy variables pass as they are: the proxy server diagnoses them", () => {
    const env = { http_proxy: "http://proxy.corp:3128", NO_PROXY: "localhost", FTP_PROXY: "x" };
    expect(serverEnv([], env)).toEqual({ http_proxy: "http://proxy.corp:3128", NO_PROXY: "localhost" });
  });
});
