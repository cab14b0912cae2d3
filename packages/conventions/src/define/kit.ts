/**
 * A server's typed kit, built once from its env schema (as tRPC's initTRPC.context()): the tools and streams
 * it defines see `ctx.config` with that server's own fields typed, and nothing needs a cast.
 *
 *   export const { defineTool, defineStream, defineServer } = createKit({ env: { RESOLV_CONF: z.string() } });
 */
import type { z } from "zod";
import { defineResource, type Resource, type ResourceSpec } from "../runtime/resources.ts";
import type { BaseConfig } from "./config.ts";
import { defineServerWith, type ServerDef, type ServerSpec } from "./server-def.ts";
import { defineStream, type Stream, type StreamSpec } from "./stream.ts";
import { defineTool, type Tool, type ToolSpec } from "./tool.ts";

/** The config a server with these extra env fields sees. */
export type ConfigOf<E extends z.ZodRawShape> = Readonly<BaseConfig & z.output<z.ZodObject<E>>>;

export interface Kit<C> {
  defineTool<I extends z.ZodRawShape, O extends z.ZodRawShape>(spec: ToolSpec<I, O, C>): Tool<I, O, C>;
  defineStream<I extends z.ZodRawShape, M extends z.ZodRawShape>(spec: StreamSpec<I, M, C>): Stream<I, M, C>;
  defineServer(spec: ServerSpec): ServerDef<C>;
  /** Something the server keeps between calls, per runtime: `ctx.use(resource)`, closed with the runtime. */
  defineResource<T>(spec: ResourceSpec<T, C>): Resource<T, C>;
}

export function createKit<E extends z.ZodRawShape = Record<never, never>>(options: { env?: E } = {}): Kit<ConfigOf<E>> {
  return {
    defineTool,
    defineStream,
    defineServer: defineServerWith(options.env ?? ({} as E)),
    defineResource,
  };
}

/** defineServer for a server without env vars of its own. */
export const { defineServer } = createKit();
