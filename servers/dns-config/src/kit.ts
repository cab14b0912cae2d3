/** DnsConfig's typed kit: every tool defined with it sees ctx.config with dnsConfigEnv's fields. */
import { type ConfigOf, createKit } from "@roadnerd/conventions";
import { dnsConfigEnv } from "./config.ts";

export type DnsConfigConfig = ConfigOf<typeof dnsConfigEnv>;

export const { defineTool, defineStream, defineServer } = createKit({ env: dnsConfigEnv });
