/**
 * The spec's prompts ("Small-Model Operation") and the profiles for 3B and 13B models. The system prompt
 * adds the catalog and how to stop with a label; the wording of the spec's two sentences is kept.
 */
import { LABELS } from "../labels.ts";

export const SYSTEM_PROMPT =
  'You may call MCP HTTP tools. Return ONLY ONE JSON: {"tool":"<namespace/name>","params":{...}}. No prose.';

export const REPAIR_PROMPT =
  'Output invalid. Return ONLY ONE JSON tool call. Example: {"tool":"dns/resolve","params":{"qname":"example.com"}}.';

export const FIRST_QUESTION = "Which single tool do you need first?";
export const NEXT_QUESTION = "Next tool?";
export const FINAL_QUESTION = "No more tools. Return ONLY the label JSON now.";

export function systemPrompt(catalogText: string): string {
  return [
    SYSTEM_PROMPT,
    `When you know the cause, return ONLY {"label":"<${LABELS.join("|")}>","reason":"<one line>"}.`,
    'A result\'s "next:" line is the call that tells more.',
    "Tools:",
    catalogText,
  ].join("\n");
}

export interface ModelProfile {
  temperature: number;
  max_tokens: number;
  /** How many earlier tool results stay in the conversation (small models lose track of long contexts). */
  turns: number;
  /** Characters of each tool result's model view shown to the model (its first line, the verdict, is never cut). */
  result_chars: number;
}

export const PROFILE_NAMES = ["3b", "13b", "20b"] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

/** 20b: the spec's baseline size (the evaluation's third row): room for every result in full. */
export const PROFILES: Readonly<Record<ProfileName, ModelProfile>> = {
  "3b": { temperature: 0.2, max_tokens: 80, turns: 1, result_chars: 600 },
  "13b": { temperature: 0.2, max_tokens: 160, turns: 3, result_chars: 1500 },
  "20b": { temperature: 0.2, max_tokens: 256, turns: 3, result_chars: 4000 },
};
