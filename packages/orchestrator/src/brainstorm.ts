/**
 * RoadNerd's brainstorm step, as the roadmap describes it: after a triage (or with no triage at all, the
 * baseline), ask the model for a few ideas of what is wrong and what to try — with triage's `category_hint`
 * when there is one. The reply must be one JSON object `{"ideas":[…]}`; the parser says whether it could be
 * read and how many ideas it held (the roadmap's "idea parsing success" and "ideas_generated").
 */
import { z } from "zod";
import { type ChatEndpoint, type ChatMessage, chatCompletion } from "./chat.ts";
import { errorInfo } from "./errors.ts";
import type { ModelProfile } from "./planners/prompts.ts";

export const BRAINSTORM_PROMPT =
  'You help fix a laptop problem. Return ONLY ONE JSON: {"ideas":["<a likely cause and what to check or do>",...]} with 3 to 5 short ideas. No prose.';

/** Ideas need more room than one tool call: at least this many tokens, whatever the profile's max_tokens. */
export const BRAINSTORM_MIN_TOKENS = 256;

export function brainstormMessages(symptom: string, categoryHint?: string): ChatMessage[] {
  const lines = [`Problem: ${symptom || "no internet"}`];
  if (categoryHint) lines.push(`Triage found: ${categoryHint}`);
  lines.push("Ideas?");
  return [
    { role: "system", content: BRAINSTORM_PROMPT },
    { role: "user", content: lines.join("\n") },
  ];
}

const ideasReply = z.strictObject({ ideas: z.array(z.string()).min(1) });

export type ParsedIdeas = { parsed: true; ideas: string[] } | { parsed: false; why: string };

/** The reply as ideas: exactly one JSON object `{"ideas":[strings]}`, nothing around it; blank ideas not counted. */
export function parseIdeas(text: string): ParsedIdeas {
  let raw: unknown;
  try {
    raw = JSON.parse(text.trim());
  } catch {
    return { parsed: false, why: "not one JSON object (prose, fences or two objects)" };
  }
  const checked = ideasReply.safeParse(raw);
  if (!checked.success) return { parsed: false, why: 'not {"ideas":[strings]}' };
  const ideas = checked.data.ideas.map((i) => i.trim()).filter((i) => i.length > 0);
  return ideas.length > 0 ? { parsed: true, ideas } : { parsed: false, why: "no idea that is not blank" };
}

export interface BrainstormResult {
  with_hint: boolean;
  parsed: boolean;
  ideas: number;
  duration_ms: number;
  /** Why it could not be read, or the endpoint's error code. */
  error?: string;
}

/** One brainstorm turn against the endpoint: the profile's temperature, room for a handful of ideas. */
export async function brainstorm(
  endpoint: ChatEndpoint,
  profile: ModelProfile,
  symptom: string,
  categoryHint?: string,
): Promise<BrainstormResult> {
  const started = performance.now();
  const sampling = {
    temperature: profile.temperature,
    max_tokens: Math.max(profile.max_tokens, BRAINSTORM_MIN_TOKENS),
  };
  const base = { with_hint: categoryHint !== undefined };
  const took = () => Math.round(performance.now() - started);
  try {
    const text = await chatCompletion(endpoint, brainstormMessages(symptom, categoryHint), sampling);
    const r = parseIdeas(text);
    if (r.parsed) return { ...base, parsed: true, ideas: r.ideas.length, duration_ms: took() };
    return { ...base, parsed: false, ideas: 0, duration_ms: took(), error: r.why };
  } catch (err) {
    return { ...base, parsed: false, ideas: 0, duration_ms: took(), error: errorInfo(err).code };
  }
}
