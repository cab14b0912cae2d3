/** route_info: placeholder until implemented (not registered as done). */
import { DiagError, defineTool } from "@roadnerd/conventions";
import { z } from "zod";

export const routeInfo = defineTool({
  name: "route_info",
  summary: "route_info (not implemented yet).",
  input: {},
  output: { note: z.string() },
  example: {},
  summarize: (r) => r.note,
  async handler() {
    throw new DiagError("E_UNSUPPORTED", "route_info is not implemented yet");
  },
});
