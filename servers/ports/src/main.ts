/** roadnerd-ports: HTTP+SSE and MCP on HOST:PORT, or MCP over stdio with --stdio. */
import { runMain } from "@roadnerd/conventions";
import { server } from "./server.ts";

await runMain(server);
