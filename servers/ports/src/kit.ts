/** Ports's typed kit: every tool, stream and resource defined with it sees ctx.config with portsEnv's fields. */
import { type ConfigOf, createKit } from "@roadnerd/conventions";
import { portsEnv } from "./config.ts";

export type PortsConfig = ConfigOf<typeof portsEnv>;

export const { defineTool, defineStream, defineServer, defineResource } = createKit({ env: portsEnv });
