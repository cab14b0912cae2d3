/**
 * One chat completion from any OpenAI-compatible endpoint (llama.cpp server, Ollama, vLLM): the planner's
 * turns and the brainstorm step both ask through here, so timeouts and errors read the same.
 */
import { cutText } from "@roadnerd/conventions";
import { request } from "undici";
import { z } from "zod";
import { fieldOf } from "./errors.ts";

export interface ChatEndpoint {
  /** Base URL, e.g. http://127.0.0.1:8080/v1 (…/chat/completions is appended). */
  url: string;
  model: string;
  apiKey?: string;
  /** Per request (default 60 s: a laptop CPU model is slow). */
  timeoutMs?: number;
}

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface Sampling {
  temperature: number;
  max_tokens: number;
}

/** The part of an OpenAI-compatible chat completion we read. */
const chatCompletionSchema = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string() }) })),
});

export class OpenAiError extends Error {
  readonly code = "E_PLANNER" as const;
}

/** The model's text for `messages`; E_TIMEOUT when it does not answer in time, E_PLANNER for anything else. */
export async function chatCompletion(
  endpoint: ChatEndpoint,
  messages: readonly ChatMessage[],
  sampling: Sampling,
  signal?: AbortSignal,
): Promise<string> {
  const url = `${endpoint.url.replace(/\/+$/, "")}/chat/completions`;
  const timeoutMs = endpoint.timeoutMs ?? 60_000;
  const deadline = AbortSignal.timeout(timeoutMs);
  const res = await request(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
    },
    body: JSON.stringify({ model: endpoint.model, messages, ...sampling, stream: false }),
    signal: AbortSignal.any([deadline, ...(signal ? [signal] : [])]),
  }).catch((err: unknown) => {
    // A model that does not answer is a timeout, as a tool that does not is.
    if (deadline.aborted)
      throw Object.assign(new OpenAiError(`${url} did not answer within ${timeoutMs} ms`), { code: "E_TIMEOUT" });
    // Nothing there (the model server not started, a wrong port or name): say where and what to check.
    const code = fieldOf(err, "code");
    if (typeof code === "string" && !signal?.aborted)
      throw new OpenAiError(
        `${url} could not be reached (${code}): is the model server running there? (ROADNERD_OPENAI_URL)`,
      );
    throw err;
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new OpenAiError(`${url} answered ${res.statusCode}: ${cutText(text, 200)}`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new OpenAiError(`${url} did not answer JSON: ${cutText(text, 200)}`);
  }
  const content = chatCompletionSchema.safeParse(raw).data?.choices[0]?.message.content;
  if (content === undefined) throw new OpenAiError(`${url}: no choices[0].message.content`);
  return content;
}
