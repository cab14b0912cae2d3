/** Webcheck: the list of tools and streams (by hand: the list is the table of contents). */
import pkg from "../package.json" with { type: "json" };
import { defineServer } from "./kit.ts";
import { uptime } from "./tools/uptime.ts";

export const server = defineServer({
  package: pkg,
  instructions:
    "A web page as a user sees it: status and headers, the TLS certificate and why it fails, a headless-browser screenshot.",
  tools: [uptime],
  streams: [],
});
