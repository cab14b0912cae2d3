/**
 * The catalog: every registered server's tools as `<server>/<tool>` with a one-line summary and its
 * parameters, built from the servers' own definitions (the registry and loadServer), never a hand-kept
 * list. `text()` is short enough for a 3B model's prompt.
 */
import type { AnyTool, BaseConfig, ServerDef } from "@roadnerd/conventions";
import { loadServer, type RegisteredServer, readRegistry } from "@roadnerd/registry";
import type { z } from "zod";
import { errorInfo } from "./errors.ts";

/** What the catalog may take in a small model's prompt, in Llama 3 tokens (packages/orchestrator/test/catalog-tokens.test.ts). */
export const CATALOG_BUDGET_TOKENS = 600;

/** Inputs every tool takes; the orchestrator fills them in, so the prompt does not list them. */
const COMMON_INPUTS = new Set(["timeout_ms", "run_id", "limit"]);

export interface CatalogEntry {
  /** `<server>/<tool>` */
  id: string;
  server: string;
  tool: string;
  summary: string;
  /** Parameter names, optional ones suffixed with `?`. */
  params: string[];
  /** The tool's own strict input schema (common inputs included). */
  definition: AnyTool;
}

type AnyStream = ServerDef<BaseConfig>["streams"][number];

/** A server's stream (GET /sse/<name> on the server's own port): for people, not in the model's prompt. */
export interface StreamEntry {
  /** `<server>/<stream>` */
  id: string;
  server: string;
  stream: string;
  summary: string;
  params: string[];
  /** The server's default port (where `roadnerd up` runs it). */
  port: number;
}

export interface Catalog {
  entries: readonly CatalogEntry[];
  streams: readonly StreamEntry[];
  servers: readonly RegisteredServer[];
  /** Servers whose definition could not be loaded, with why. */
  unavailable: ReadonlyArray<{ server: string; reason: string }>;
  get(id: string): CatalogEntry | undefined;
  /** The config variables a server declares (its own env schema): passed through to it when spawned. */
  envKeys(server: string): readonly string[];
  /** One line per tool: `network/dns_resolve {qname, type?}: summary` (≤ 600 Llama 3 tokens in all, a test holds it). */
  text(): string;
}

function paramsOf(tool: AnyTool | AnyStream): string[] {
  // The whole input the kernel takes, less what every tool takes: a stream's duration_ms is listed with its own.
  const shape: Record<string, z.ZodType> = tool.inputSchema.shape;
  return Object.keys(shape)
    .filter((k) => !COMMON_INPUTS.has(k))
    .map((k) => (shape[k]?.safeParse(undefined).success ? `${k}?` : k));
}

export function entryLine(e: CatalogEntry): string {
  return `${e.id} {${e.params.join(", ")}}: ${e.summary}`;
}

/** `ports/port_watch {port, interval_ms?, duration_ms?}: summary — http://127.0.0.1:7103/sse/port_watch` */
export function streamLine(e: StreamEntry): string {
  return `${e.id} {${e.params.join(", ")}}: ${e.summary} — http://127.0.0.1:${e.port}/sse/${e.stream}`;
}

export function catalogFrom(
  servers: readonly RegisteredServer[],
  tools: ReadonlyMap<string, readonly AnyTool[]>,
  unavailable: ReadonlyArray<{ server: string; reason: string }> = [],
  envKeys: ReadonlyMap<string, readonly string[]> = new Map(),
  streamsOf: ReadonlyMap<string, readonly AnyStream[]> = new Map(),
): Catalog {
  const entries: CatalogEntry[] = [];
  const streams: StreamEntry[] = servers.flatMap((s) =>
    (streamsOf.get(s.name) ?? []).map((st) => ({
      id: `${s.name}/${st.name}`,
      server: s.name,
      stream: st.name,
      summary: st.summary,
      params: paramsOf(st),
      port: s.defaultPort,
    })),
  );
  for (const s of servers) {
    for (const t of tools.get(s.name) ?? []) {
      entries.push({
        id: `${s.name}/${t.name}`,
        server: s.name,
        tool: t.name,
        summary: t.summary,
        params: paramsOf(t),
        definition: t,
      });
    }
  }
  const byId = new Map(entries.map((e) => [e.id, e]));
  return {
    entries,
    streams,
    servers,
    unavailable,
    get: (id) => byId.get(id),
    envKeys: (server) => envKeys.get(server) ?? [],
    text: () => entries.map(entryLine).join("\n"),
  };
}

/** Every registered server's definition, loaded in-process (nothing is spawned). */
export async function loadCatalog(servers: readonly RegisteredServer[] = readRegistry()): Promise<Catalog> {
  const tools = new Map<string, readonly AnyTool[]>();
  const envKeys = new Map<string, readonly string[]>();
  const streams = new Map<string, readonly AnyStream[]>();
  const unavailable: Array<{ server: string; reason: string }> = [];
  await Promise.all(
    servers.map(async (s) => {
      try {
        const def = await loadServer(s.name);
        tools.set(s.name, def.tools);
        envKeys.set(s.name, Object.keys(def.env));
        streams.set(s.name, def.streams);
      } catch (err) {
        unavailable.push({ server: s.name, reason: errorInfo(err).message.slice(0, 200) });
      }
    }),
  );
  return catalogFrom(
    servers.filter((s) => tools.has(s.name)),
    tools,
    unavailable,
    envKeys,
    streams,
  );
}
