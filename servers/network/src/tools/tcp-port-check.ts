/** tcp_port_check: placeholder until implemented (not registered as done). */
import { DiagError, defineTool } from "@roadnerd/conventions";
import { z } from "zod";

export const tcpPortCheck = defineTool({
  name: "tcp_port_check",
  summary: "tcp_port_check (not implemented yet).",
  input: {},
  output: { note: z.string() },
  example: {},
  summarize: (r) => r.note,
  async handler() {
    throw new DiagError("E_UNSUPPORTED", "tcp_port_check is not implemented yet");
  },
});
