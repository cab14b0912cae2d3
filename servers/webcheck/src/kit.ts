/** Webcheck's typed kit: every tool, stream and resource defined with it sees ctx.config with webcheckEnv's fields. */
import { type ConfigOf, createKit } from "@roadnerd/conventions";
import { webcheckEnv } from "./config.ts";

export type WebcheckConfig = ConfigOf<typeof webcheckEnv>;

export const { defineTool, defineStream, defineServer, defineResource } = createKit({ env: webcheckEnv });
