/** Proxy's typed kit: every tool defined with it sees ctx.config with proxyEnv's fields. */
import { type ConfigOf, createKit } from "@roadnerd/conventions";
import { proxyEnv } from "./config.ts";

export type ProxyConfig = ConfigOf<typeof proxyEnv>;

export const { defineTool, defineStream, defineServer } = createKit({ env: proxyEnv });
