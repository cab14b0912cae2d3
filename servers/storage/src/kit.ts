/** Storage's typed kit: add this server's env vars here; handlers see them typed on ctx.config. */
import { createKit } from "@roadnerd/conventions";

export const { defineTool, defineStream, defineServer } = createKit({ env: {} });
