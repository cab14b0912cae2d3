/**
 * ALLOWED_ORIGINS and ALLOWED_HOSTS entries that can never match (a wildcard, a path, a port) are refused at
 * start, naming the entry and what is accepted (issue 18, A11: `https://*.corp.example` was accepted and matched
 * literally, so it looked like it opened a domain and opened nothing).
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { serverEntry } from "@roadnerd/testkit";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/define/config.ts";

const run = promisify(execFile);

const refusal = (env: Record<string, string>): string => {
  try {
    loadConfig(env);
  } catch (e) {
    return (e as Error).message;
  }
  return "accepted";
};

describe("ALLOWED_ORIGINS entries", () => {
  it.each([
    ["https://*.corp.example", "wildcards are not supported"],
    ["*", "wildcards are not supported"],
    ["https://corp.*", "wildcards are not supported"],
    ["http://localhost:6274/", "did you mean http://localhost:6274?"],
    ["https://App.Corp.example:443", "did you mean https://app.corp.example?"],
    ["app.corp.example", "scheme://host[:port]"],
    ["null", "scheme://host[:port]"],
  ])("%s is refused: %s", (entry, says) => {
    const message = refusal({ ALLOWED_ORIGINS: `http://localhost:6274,${entry}` });
    expect(message).toContain("ALLOWED_ORIGINS");
    expect(message).toContain(JSON.stringify(entry));
    expect(message).toContain(says);
  });

  it("exact origins as browsers send them are accepted", () => {
    const origins = "http://localhost:6274,https://app.corp.example,http://[::1]:8080,chrome-extension://abcdef";
    expect(loadConfig({ ALLOWED_ORIGINS: origins }).ALLOWED_ORIGINS).toHaveLength(4);
  });
});

describe("ALLOWED_HOSTS entries", () => {
  it.each([
    ["*.corp.example", "wildcards are not supported"],
    ["*", "wildcards are not supported"],
    ["diag.lan:8080", "no scheme, port or path"],
    ["https://diag.lan", "no scheme, port or path"],
    ["[::1]", "did you mean ::1?"],
  ])("%s is refused: %s", (entry, says) => {
    const message = refusal({ ALLOWED_HOSTS: `diag.lan,${entry}` });
    expect(message).toContain("ALLOWED_HOSTS");
    expect(message).toContain(JSON.stringify(entry));
    expect(message).toContain(says);
  });

  it("names and addresses are accepted, whatever their case", () => {
    expect(loadConfig({ ALLOWED_HOSTS: "Diag.LAN,dns-config,10.0.0.5,::1" }).ALLOWED_HOSTS).toHaveLength(4);
  });
});

describe("a server started with one", () => {
  it("exits 2 before binding, naming the entry and what is accepted", async () => {
    const bad = await run(process.execPath, [serverEntry("network")], {
      env: { PATH: "/usr/bin:/bin", PORT: "0", ALLOWED_ORIGINS: "https://*.corp.example" },
    }).catch((e: { code: number; stderr: string; stdout: string }) => e);
    expect(bad).toMatchObject({ code: 2, stdout: "" });
    expect("stderr" in bad && bad.stderr).toMatch(
      /ALLOWED_ORIGINS: "https:\/\/\*\.corp\.example": wildcards are not supported; list each origin, an origin exactly as a browser sends it/,
    );
  });
});
