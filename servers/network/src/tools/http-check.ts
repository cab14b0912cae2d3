/** http_check: placeholder until implemented (not registered as done). */
import { DiagError, defineTool } from "@roadnerd/conventions";
import { z } from "zod";

export const httpCheck = defineTool({
  name: "http_check",
  summary: "http_check (not implemented yet).",
  input: {},
  output: { note: z.string() },
  example: {},
  summarize: (r) => r.note,
  async handler() {
    throw new DiagError("E_UNSUPPORTED", "http_check is not implemented yet");
  },
});
