/** Service's typed kit: every tool and stream defined with it sees ctx.config with serviceEnv's fields. */
import { type ConfigOf, createKit } from "@roadnerd/conventions";
import { serviceEnv } from "./config.ts";

export type ServiceConfig = ConfigOf<typeof serviceEnv>;

export const { defineTool, defineStream, defineServer, defineResource } = createKit({ env: serviceEnv });
