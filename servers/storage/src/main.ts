/** roadnerd-storage: HTTP+SSE and MCP on HOST:PORT, or MCP over stdio with --stdio. */
import { runMain } from "@roadnerd/conventions";
import { server } from "./server.ts";

// Not awaited at the top: the build bundles this as CommonJS (ADR 0062).
void runMain(server);
