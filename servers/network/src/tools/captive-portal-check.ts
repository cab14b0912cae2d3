/** captive_portal_check: placeholder until implemented (not registered as done). */
import { DiagError, defineTool } from "@roadnerd/conventions";
import { z } from "zod";

export const captivePortalCheck = defineTool({
  name: "captive_portal_check",
  summary: "captive_portal_check (not implemented yet).",
  input: {},
  output: { note: z.string() },
  example: {},
  summarize: (r) => r.note,
  async handler() {
    throw new DiagError("E_UNSUPPORTED", "captive_portal_check is not implemented yet");
  },
});
