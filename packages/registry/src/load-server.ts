/**
 * A server's definition by name. The template-literal import is a glob to esbuild (every servers/<name>/src/
 * server.ts is bundled into a script that uses this) and a plain path to vitest, so neither needs a list.
 */
import type { BaseConfig, ServerDef } from "@roadnerd/conventions";
import { SERVER_NAME } from "@roadnerd/conventions/internal";

export async function loadServer(name: string): Promise<ServerDef<BaseConfig>> {
  if (!SERVER_NAME.test(name)) throw new Error(`not a server name: ${name}`);
  const mod = (await import(`../../../servers/${name}/src/server.ts`)) as { server?: ServerDef<BaseConfig> };
  if (!mod.server) throw new Error(`servers/${name}/src/server.ts must export \`server\` (its defineServer)`);
  return mod.server;
}
