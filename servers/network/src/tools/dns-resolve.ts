/** dns_resolve: placeholder until implemented (not registered as done). */
import { DiagError, defineTool } from "@roadnerd/conventions";
import { z } from "zod";

export const dnsResolve = defineTool({
  name: "dns_resolve",
  summary: "dns_resolve (not implemented yet).",
  input: {},
  output: { note: z.string() },
  example: {},
  summarize: (r) => r.note,
  async handler() {
    throw new DiagError("E_UNSUPPORTED", "dns_resolve is not implemented yet");
  },
});
