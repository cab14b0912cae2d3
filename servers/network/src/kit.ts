/** NetworkDiag's typed kit: every tool and stream defined with it sees ctx.config with networkEnv's fields. */
import { type ConfigOf, createKit } from "@roadnerd/conventions";
import { networkEnv } from "./config.ts";

export type NetworkConfig = ConfigOf<typeof networkEnv>;

export const { defineTool, defineStream, defineServer } = createKit({ env: networkEnv });
