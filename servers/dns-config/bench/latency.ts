/**
 * DnsConfig's per-tool latency against the files underneath, read the same way in the same run: the whole HTTP
 * call against one fs.readFile of resolv.conf (on this machine's / and in a root built like systemd-resolved's
 * stub layout, where the tool also reads the uplink file and per-link state). Used by `pnpm bench`.
 */
import { readFile, stat } from "node:fs/promises";
import type { BenchCall, BenchContext } from "@roadnerd/testkit";
import { buildRoot } from "../test/helpers/build-root.ts";
import { layouts } from "../test/helpers/layouts.ts";

export async function benchLatency(b: BenchContext): Promise<void> {
  const root = await buildRoot(layouts.resolvedStub);
  const host = await b.start({});
  const built = await b.start(root.env);
  try {
    await b.pair(
      "dns_config_get (/)",
      () => b.call(host, "dns_config_get", {}),
      "fs.readFile /etc/resolv.conf",
      () => readFile("/etc/resolv.conf", "utf8"),
    );
    await b.pair(
      "dns_config_get (stub)",
      () => b.call(built, "dns_config_get", {}),
      "fs.readFile stub-resolv.conf",
      () => readFile(`${root.dir}/etc/resolv.conf`, "utf8"),
    );
    await b.pair(
      "resolved_status (/)",
      () => b.call(host, "resolved_status", {}),
      "fs.stat /run/systemd/resolve",
      () => stat("/run/systemd/resolve").catch(() => undefined),
    );
    await b.pair(
      "healthz (no tool)",
      async () => (await fetch(`${host.url}/healthz`)).arrayBuffer(),
      "fs.readFile /etc/resolv.conf",
      () => readFile("/etc/resolv.conf", "utf8"),
    );
  } finally {
    host.kill();
    built.kill();
    await root.remove();
  }
}

/** A cheap call for the /mcp vs /actions comparison. */
export async function cheapCall(): Promise<BenchCall> {
  return { tool: "dns_config_get", args: {}, close: () => {} };
}
