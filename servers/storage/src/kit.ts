/** Storage's typed kit: every tool, stream and resource defined with it sees ctx.config with storageEnv's fields. */
import { type ConfigOf, createKit } from "@roadnerd/conventions";
import { storageEnv } from "./config.ts";

export type StorageConfig = ConfigOf<typeof storageEnv>;

export const { defineTool, defineStream, defineServer, defineResource } = createKit({ env: storageEnv });
