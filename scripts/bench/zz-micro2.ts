import { readDnsConfig } from "../../servers/dns-config/src/resolv/analyse.ts";
import { readInRoot, listInRoot } from "../../servers/dns-config/src/fs/read-bounded.ts";
import { readLinkDns } from "../../servers/dns-config/src/resolved/links.ts";
import { resolvedRunning } from "../../servers/dns-config/src/resolved/running.ts";
import { buildRoot } from "../../servers/dns-config/test/helpers/build-root.ts";
import { layouts } from "../../servers/dns-config/test/helpers/layouts.ts";
const root = await buildRoot(layouts.resolvedStub);
const r = root.dir;
const t = async (name: string, fn: () => Promise<unknown>) => {
  for (let i = 0; i < 1000; i++) await fn();
  const t0 = performance.now(); for (let i = 0; i < 3000; i++) { await fn(); await new Promise(setImmediate); }
  console.log(name.padEnd(30), ((performance.now() - t0) / 3000 * 1000).toFixed(1), "µs");
};
await t("readDnsConfig stub", () => readDnsConfig(r, 1000));
await t("readInRoot resolv", () => readInRoot(r, "/etc/resolv.conf"));
await t("readLinkDns", () => readLinkDns(r));
await t("resolvedRunning", () => resolvedRunning(r, 1000));
await t("readDnsConfig /", () => readDnsConfig("/", 1000));
await root.remove();
