/** defineServer: a server is its package identity, its instructions and the list of its tools and streams. */
import type { z } from "zod";
import type { Prober } from "../probe/prober.ts";
import type { Command } from "./command.ts";
import { type BaseConfig, loadConfig } from "./config.ts";
import { parseServerPackage, type ServerIdentity } from "./server-package.ts";
import type { AnyStream } from "./stream.ts";
import type { AnyTool } from "./tool.ts";

export interface ServerSpec {
  /** The server's own package.json (imported with `with { type: "json" }`): name, version, port, summary. */
  package: unknown;
  /** A few lines for MCP clients: what this server is for and which tool to call first. */
  instructions: string;
  tools: readonly AnyTool[];
  streams?: readonly AnyStream[];
  /**
   * `allowlist-only`: every outbound target is refused until OUTBOUND_ALLOW names it (E_FORBIDDEN naming the
   * variable). Default: the kernel's policy (everything but metadata, link-local and unroutable).
   */
  outbound?: "default" | "allowlist-only";
  /** blackbox-style probers behind GET /probe (modules from PROBE_CONFIG, which the server's env must include). */
  probers?: readonly Prober[];
}

export interface ServerDef<C = BaseConfig> extends ServerIdentity {
  instructions: string;
  tools: readonly AnyTool[];
  streams: readonly AnyStream[];
  /** The server's allowlist: the union of the commands its tools and streams declare. */
  commands: readonly Command[];
  outbound: "default" | "allowlist-only";
  probers: readonly Prober[];
  /** The env vars this server adds to the base ones (for docs and --help). */
  env: z.ZodRawShape;
  /** Parse and freeze the config from an environment; throws E_INVALID_INPUT naming each bad variable. */
  loadConfig(env: NodeJS.ProcessEnv): C;
}

export function defineServerWith<E extends z.ZodRawShape>(
  env: E,
): (spec: ServerSpec) => ServerDef<Readonly<BaseConfig & z.output<z.ZodObject<E>>>> {
  return (spec) => {
    const identity = parseServerPackage(spec.package);
    const streams = spec.streams ?? [];
    const names = new Set<string>();
    for (const n of [...spec.tools.map((t) => t.name), ...streams.map((s) => s.name)]) {
      if (names.has(n)) throw new Error(`duplicate tool or stream name: ${n}`);
      names.add(n);
    }
    const commands = [...new Set([...spec.tools, ...streams].flatMap((t) => t.commands))];
    return {
      ...identity,
      instructions: spec.instructions,
      tools: spec.tools,
      streams,
      commands,
      outbound: spec.outbound ?? "default",
      probers: spec.probers ?? [],
      env,
      loadConfig: (vars) => loadConfig(vars, env),
    };
  };
}
