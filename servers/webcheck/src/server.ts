/** Webcheck: the list of tools and streams (by hand: the list is the table of contents). */
import pkg from "../package.json" with { type: "json" };
import { defineServer } from "./kit.ts";
import { snapshot } from "./streams/snapshot.ts";
import { head } from "./tools/head.ts";
import { screenshots } from "./tools/screenshots.ts";
import { tlsInfo } from "./tools/tls-info.ts";

export const server = defineServer({
  package: pkg,
  // Someone else's infrastructure, or whatever a page links: nothing until OUTBOUND_ALLOW names it (0016).
  outbound: "allowlist-only",
  instructions:
    "A web page as a user sees it. Reaches only what OUTBOUND_ALLOW names. head (status, headers, redirect), tls_info (certificate: trusted? why not?), /sse/snapshot (headless-browser screenshot file), screenshots (the files saved).",
  tools: [head, tlsInfo, screenshots],
  streams: [snapshot],
});
