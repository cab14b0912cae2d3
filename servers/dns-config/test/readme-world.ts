/**
 * The world the README's curl lines and the root suites run in: DNS_CONFIG_ROOT set to a root built like a
 * laptop with systemd-resolved's stub (its uplink file, per-link state, a resolved.conf with a drop-in), so the
 * examples show the real shape of an answer without reading this machine.
 */
import { buildRoot } from "./helpers/build-root.ts";
import { layouts } from "./helpers/layouts.ts";

export async function startReadmeWorld() {
  const root = await buildRoot({
    ...layouts.resolvedStub,
    "etc/systemd/resolved.conf": "[Resolve]\nDNSSEC=allow-downgrade\nFallbackDNS=198.51.100.1 198.51.100.2\n",
    "etc/systemd/resolved.conf.d/10-corp.conf": "[Resolve]\nDomains=corp.example\n",
  });
  return { env: root.env, close: root.remove };
}
