/**
 * webcheck (and proxy) refuse every target until OUTBOUND_ALLOW names it, and say "start the server with
 * OUTBOUND_ALLOW=…". Through `roadnerd call` the person did not start that server: the error says how to set
 * it from where they are — the command's own environment when the CLI starts the server, `--set
 * <server>.OUTBOUND_ALLOW` when one was already running (`roadnerd up`) — and keeps the server's own hint.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { REPO_ROOT } from "@roadnerd/registry";
import { type SpawnedServer, scaledMs, spawnServer } from "@roadnerd/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { outboundHint } from "../src/cli/outbound-hint.ts";

const BIN = join(REPO_ROOT, "packages/orchestrator/dist/main.js");
const ENV = { PATH: process.env.PATH ?? "/usr/bin:/bin", ROADNERD_ATTACH_TIMEOUT_MS: "120000" };
/** A documentation address (RFC 5737): refused before any connection while OUTBOUND_ALLOW is empty. */
const TARGET = "url=http://192.0.2.10/";

/** argv run in a network namespace of its own (only `lo`): no server another test runs on 7107 is reused. */
const OWN_NAMESPACE = ["unshare", "--net", "--", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"];

function roadnerd(
  args: string[],
  options: { env?: Record<string, string>; ownNamespace?: boolean } = {},
): Promise<{ code: number; stderr: string }> {
  const argv = [...(options.ownNamespace ? OWN_NAMESPACE : []), process.execPath, BIN, ...args];
  return new Promise((resolve) => {
    execFile(
      argv[0] ?? "",
      argv.slice(1),
      { env: { ...ENV, ...options.env }, timeout: scaledMs(120_000) },
      (e, _o, stderr) => resolve({ code: e ? Number((e as { code?: unknown }).code ?? 1) : 0, stderr }),
    );
  });
}

let running: SpawnedServer | undefined;
afterAll(async () => {
  await running?.stop();
});

describe("roadnerd call: an OUTBOUND_ALLOW refusal says how to set it from here", () => {
  it("a server the command starts: OUTBOUND_ALLOW in the command's environment", async () => {
    const r = await roadnerd(["call", "webcheck/head", TARGET], { ownNamespace: true });
    expect(r.code, r.stderr).toBe(1);
    const line = r.stderr.split("\n").find((l) => l.startsWith("E_FORBIDDEN")) ?? "";
    expect(line).toContain("start the server with OUTBOUND_ALLOW=");
    expect(line).toContain("OUTBOUND_ALLOW=<hosts or CIDRs> roadnerd call …");
    expect(line).not.toContain("--set");
  });

  it(
    "a server already running (as under roadnerd up): --set <server>.OUTBOUND_ALLOW, for it alone",
    async () => {
      running = await spawnServer("webcheck");
      const r = await roadnerd(["call", "webcheck/head", TARGET], {
        env: { ROADNERD_SERVER_WEBCHECK_URL: running.url },
      });
      expect(r.code, r.stderr).toBe(1);
      const line = r.stderr.split("\n").find((l) => l.startsWith("E_FORBIDDEN")) ?? "";
      expect(line).toContain("already running");
      expect(line).toContain("--set webcheck.OUTBOUND_ALLOW=<hosts or CIDRs>, for webcheck alone");
    },
    scaledMs(120_000),
  );

  it("leaves every other error as the server said it", () => {
    const other = { code: "E_FORBIDDEN", message: "/etc is outside the directories this server may walk" };
    expect(outboundHint(other, "storage", false)).toBe(other);
    const invalid = { code: "E_INVALID_INPUT", message: "OUTBOUND_ALLOW: bad entry" };
    expect(outboundHint(invalid, "webcheck", true)).toBe(invalid);
  });
});
