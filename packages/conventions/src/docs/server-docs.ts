/** A server's reference for its README, from its definitions: tools, streams, inputs, outputs, env. */
import { baseEnvShape } from "../define/config.ts";
import { inputJsonSchema, type JsonSchema, outputJsonSchema } from "../define/schemas.ts";
import type { ServerDef } from "../define/server-def.ts";

function fence(value: unknown): string {
  return ["```json", JSON.stringify(value, null, 2), "```"].join("\n");
}

function envRows(shape: Record<string, { description?: string | undefined }>): string[] {
  return Object.entries(shape).map(([name, s]) => `| \`${name}\` | ${s.description ?? ""} |`);
}

export function renderServerReference(def: ServerDef<unknown>): string {
  const out: string[] = ["### Tools", "", "| tool | what it does |", "| --- | --- |"];
  for (const t of def.tools) out.push(`| \`${def.name}/${t.name}\` | ${t.summary} |`);
  out.push("", "### Streams", "", "| stream | what it does |", "| --- | --- |");
  for (const s of def.streams) out.push(`| \`/sse/${s.name}\` | ${s.summary} |`);
  out.push("| `/sse/<tool>` | Any tool as a stream: `ping` while it runs, one `message`, `end`. |");
  out.push("", "### Environment", "", "| variable | meaning |", "| --- | --- |");
  out.push(...envRows(baseEnvShape), ...envRows(def.env as Record<string, { description?: string }>));
  out.push("", "### JSON Schemas");
  const section = (title: string, inLabel: string, input: JsonSchema, outLabel: string, output: JsonSchema) =>
    out.push("", `#### \`${title}\``, "", inLabel, "", fence(input), "", outLabel, "", fence(output));
  for (const t of def.tools) {
    section(t.name, "Input:", inputJsonSchema(t.inputSchema), "Output:", outputJsonSchema(t.outputSchema));
  }
  for (const s of def.streams) {
    const query = inputJsonSchema(s.inputSchema);
    section(`/sse/${s.name}`, "Query:", query, "Each `message`:", outputJsonSchema(s.messageSchema));
  }
  return out.join("\n");
}
