/**
 * When `ip` fails, the tools say so with a typed error instead of reporting an empty machine. A fake `ip` on
 * EXEC_PATH plays each failure (these are parser fixtures for the failure paths; the live path is tested in
 * iface-info.links.test.ts and route-info.links.test.ts against real namespaces). iface_info reaches `ip` here because the
 * sealed run's /sys is the host's, not this namespace's (read/ifaces.ts then spawns `ip`).
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testApp } from "@roadnerd/conventions/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";

let dir: string;
let cases = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rn-ip-fail-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function callWithFakeIp(tool: string, script: string | null) {
  // Each case its own EXEC_PATH directory; an empty one means "ip is not installed".
  const bin = join(dir, `bin-${++cases}`);
  await mkdir(bin);
  if (script !== null) {
    await writeFile(join(bin, "ip"), `#!/bin/sh\n${script}\n`);
    await chmod(join(bin, "ip"), 0o755);
  }
  const app = await testApp(server, { env: { EXEC_PATH: bin } });
  try {
    const res = await app.inject({ method: "POST", url: `/actions/${tool}`, payload: {} });
    return { status: res.statusCode, body: res.json() };
  } finally {
    await app.close();
  }
}

describe("ip failures are typed errors, never an empty answer", () => {
  it.each(["iface_info", "route_info"])("%s: ip exits 1 → 501 E_UNSUPPORTED with its stderr", async (tool) => {
    const r = await callWithFakeIp(tool, 'echo "Cannot open netlink socket: Permission denied" >&2; exit 1');
    expect(r.status).toBe(501);
    expect(r.body.error.code).toBe("E_UNSUPPORTED");
    expect(r.body.error.message).toContain("Cannot open netlink socket");
  });

  it.each(["iface_info", "route_info"])(
    "%s: output that is not JSON → 502 E_EXEC_FAILED (issue 18: not E_INTERNAL)",
    async (tool) => {
      const r = await callWithFakeIp(tool, "echo 'this is not json'");
      expect(r.status).toBe(502);
      expect(r.body.error).toMatchObject({
        code: "E_EXEC_FAILED",
        message: expect.stringMatching(/^could not parse ip/),
      });
    },
  );

  it.each(["iface_info", "route_info"])("%s: no ip binary → 424 E_NO_BINARY naming it", async (tool) => {
    const r = await callWithFakeIp(tool, null);
    expect(r.status).toBe(424);
    expect(r.body.error.code).toBe("E_NO_BINARY");
    expect(r.body.error.message).toMatch(/^ip is not installed/);
  });
});
