/**
 * A bundle that holds one non-ASCII character anywhere (a comment's dash, a regex's curly quote) is decoded
 * into a two-byte string: twice the memory for as long as the process lives, and 4–14 ms to read a server's
 * 2–4 MB at each start instead of ~1 (ADR 0062). esbuild's `charset: "ascii"` escapes strings but leaves
 * comments and regular-expression literals as they are, so every UTF-16 unit above 0x7f becomes `\uXXXX`:
 * the same character in a string, template or regex (with or without the `u` flag a pair of escaped
 * surrogates is one code point), an identifier, and text in a comment. Only a template's raw text (String.raw)
 * would differ, as it does under esbuild's own charset option.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { type BuildOptions, build } from "esbuild";

export function asciiOnly(code: string): string {
  // An escaped character (`\“` in a string or a regex: itself) becomes its escape, `\u201c`; `\\u201c` would be
  // a backslash and "u201c". An even run of backslashes before it escapes only themselves.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the range starts just above ASCII, no control character.
  return code.replace(/(\\*)([^\x00-\x7f])/g, (_m, slashes: string, c: string) => {
    const kept = slashes.length % 2 === 1 ? slashes.slice(1) : slashes;
    return `${kept}\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
}

/** Builds with esbuild and writes every output file ASCII-only (source maps as they are). */
/** Whether the build wrote anything new: a file whose bytes are already there is left as it is. */
export async function buildAscii(options: BuildOptions): Promise<boolean> {
  const result = await build({ ...options, write: false });
  let changed = false;
  for (const file of result.outputFiles ?? []) {
    const bytes = file.path.endsWith(".map") ? Buffer.from(file.contents) : Buffer.from(asciiOnly(file.text));
    const before = await readFile(file.path).catch(() => undefined);
    if (before?.equals(bytes)) continue;
    changed = true;
    await mkdir(dirname(file.path), { recursive: true });
    await writeFile(file.path, bytes);
  }
  return changed;
}
