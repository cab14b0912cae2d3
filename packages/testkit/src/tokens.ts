/**
 * Tokens as a 3B-class model counts them: the Llama 3 tokenizer (the one Llama 3.2 3B itself uses), from
 * llama3-tokenizer-js, which bakes the real vocabulary and merges into the package: no download, no model.
 * Its own entry (`@roadnerd/testkit/tokens`), so nothing that bundles the testkit's worlds carries 9 MB of vocabulary.
 */
import llama3Tokenizer from "llama3-tokenizer-js";

export const TOKENIZER = "Llama 3 (llama3-tokenizer-js 1.2.0)";

/** Tokens of `text`, without the begin/end-of-text markers a prompt adds once. */
export function countTokens(text: string): number {
  return llama3Tokenizer.encode(text, { bos: false, eos: false }).length;
}
