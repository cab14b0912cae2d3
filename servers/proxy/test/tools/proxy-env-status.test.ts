/** proxy_env_status through the kernel: this process's env (stubbed per test) and a root of real files. */
import { callTool } from "@roadnerd/conventions/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { server } from "../../src/server.ts";
import { PROXY_VARIABLES, proxyEnvStatus } from "../../src/tools/proxy-env-status.ts";
import { CORP_FILES, type EtcRoot, makeEtcRoot } from "../helpers/etc-root.ts";

let root: EtcRoot;
beforeAll(async () => {
  root = await makeEtcRoot(CORP_FILES);
});
afterAll(async () => {
  await root?.close();
});
afterEach(() => {
  vi.unstubAllEnvs();
});

/** Only the variables a test names: the runner's own proxy settings must not leak in. */
function stubProxyEnv(vars: Record<string, string>): void {
  for (const name of PROXY_VARIABLES) vi.stubEnv(name, undefined);
  for (const [name, value] of Object.entries(vars)) vi.stubEnv(name, value);
}

describe("proxy_env_status", () => {
  it("reports what this process's client uses, every variable masked, and the system files", async () => {
    stubProxyEnv({ http_proxy: "alice:s3cret@proxy.corp:3128", NO_PROXY: "10.0.0.0/8", no_proxy: "" });
    const r = await callTool(server, proxyEnvStatus, {}, { env: { PROXY_ROOT: root.dir } });
    expect(r.http_proxy).toBe("[masked]@proxy.corp:3128");
    expect(r.https_proxy).toBe("[masked]@proxy.corp:3128");
    expect(r.no_proxy).toBeUndefined();
    expect(r.variables).toEqual({ http_proxy: "[masked]@proxy.corp:3128", no_proxy: "", NO_PROXY: "10.0.0.0/8" });
    expect(r.clients.find((c) => c.client === "curl")).toEqual({
      client: "curl",
      http: { value: "[masked]@proxy.corp:3128", from: "http_proxy" },
      https: null,
      no_proxy: { value: "10.0.0.0/8", from: "NO_PROXY" },
      cidr_no_proxy: true,
    });
    expect(r.warnings).toEqual([
      expect.stringMatching(/^no https_proxy/),
      expect.stringMatching(/^no_proxy is set but empty/),
      expect.stringMatching(/^NO_PROXY has CIDR entries/),
    ]);
    expect(r.system).toHaveLength(12);
    expect(r.pac).toHaveLength(2);
    expect(r.truncated).toBe(false);
    expect(r.summary).toBe(
      "http via [masked]@proxy.corp:3128, https via [masked]@proxy.corp:3128; 3 client disagreement(s); 12 system setting(s)",
    );
    expect(JSON.stringify(r)).not.toContain("s3cret");
  });

  it("says direct when nothing is set, and caps the system list with limit", async () => {
    stubProxyEnv({});
    const r = await callTool(server, proxyEnvStatus, { limit: 2 }, { env: { PROXY_ROOT: root.dir } });
    expect(r.http_proxy).toBeUndefined();
    expect(r.variables).toEqual({});
    expect(r.warnings).toEqual([]);
    expect(r.system).toHaveLength(2);
    expect(r).toMatchObject({ truncated: true, omitted: 10 });
    expect(r.summary).toBe("http via direct, https via direct; 2 system setting(s)");
  });

  it.each([
    [{ verbose: true }, "valid keys"],
    [{ limit: 0 }, "limit"],
    [{ limit: "5" }, "limit"],
  ])("refuses bad input %j", async (input, text) => {
    await expect(callTool(server, proxyEnvStatus, input)).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
      message: expect.stringContaining(text),
    });
  });
});
