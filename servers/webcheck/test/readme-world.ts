/**
 * The world the README's curl lines and the root suites run webcheck in: it may reach loopback only
 * (OUTBOUND_ALLOW=127.0.0.1) and, so the README's examples can point at an address they know without a page
 * server of their own, its own address too (OUTBOUND_ALLOW_SELF=1): the server's /healthz stands in for a page.
 * Screenshots go to a temporary directory removed afterwards.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export async function startReadmeWorld() {
  const dir = await mkdtemp(join(tmpdir(), "rn-webcheck-world-"));
  return {
    env: {
      OUTBOUND_ALLOW: "127.0.0.1",
      OUTBOUND_ALLOW_SELF: "1",
      WEBCHECK_ARTIFACTS_DIR: dir,
      // A short idle: the README run's browser goes soon after its last snapshot.
      WEBCHECK_BROWSER_IDLE_MS: "5000",
    },
    async close() {
      await rm(dir, { recursive: true, force: true });
    },
  };
}
