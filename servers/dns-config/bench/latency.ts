/**
 * DnsConfig's per-tool latency against `cat` (what a user would type), against the HTTP floor (/healthz over the
 * same connection: the target is within 0.3 ms of it) and, informational, one fs.readFile of resolv.conf (on this machine's / and in a root built like systemd-resolved's
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
    const healthz = () => b.floor(host);
    const get = () => b.call(host, "dns_config_get", {});
    await b.pairCommand("dns_config_get (/)", get, ["cat", "/etc/resolv.conf"]);
    await b.pair("dns_config_get (/)", get, "/healthz (the HTTP floor)", healthz, { withinMs: 0.3 });
    await b.pair(
      "dns_config_get (/)",
      get,
      "fs.readFile /etc/resolv.conf",
      () => readFile("/etc/resolv.conf", "utf8"),
      {
        floor: true,
      },
    );
    await b.pair(
      "dns_config_get (stub)",
      () => b.call(built, "dns_config_get", {}),
      "fs.readFile stub-resolv.conf",
      () => readFile(`${root.dir}/etc/resolv.conf`, "utf8"),
      { floor: true },
    );
    await b.pair(
      "dns_config_get (stub)",
      () => b.call(built, "dns_config_get", {}),
      "/healthz (the HTTP floor)",
      () => b.floor(built),
      { withinMs: 0.3 },
    );
    const resolved = () => b.call(host, "resolved_status", {});
    await b.pairCommand("resolved_status (/)", resolved, ["resolvectl", "status"]);
    await b.pair("resolved_status (/)", resolved, "/healthz (the HTTP floor)", healthz, { withinMs: 0.3 });
    await b.pair(
      "resolved_status (/)",
      resolved,
      "fs.stat /run/systemd/resolve",
      () => stat("/run/systemd/resolve").catch(() => undefined),
      { floor: true },
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
