/**
 * A server's definition by name, imported through its package (servers.ts, generated from servers/*): esbuild
 * bundles every one into the orchestrator, vitest and tsc resolve them as workspace packages.
 */
import type { BaseConfig, ServerDef } from "@roadnerd/conventions";
import { SERVER_MODULES } from "./servers.ts";

export async function loadServer(name: string): Promise<ServerDef<BaseConfig>> {
  const load = Object.hasOwn(SERVER_MODULES, name) ? SERVER_MODULES[name] : undefined;
  if (!load) throw new Error(`${name} is not a registered server (after adding servers/${name}: pnpm generate)`);
  return (await load()).server;
}
