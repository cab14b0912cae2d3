/**
 * The root README's fenced blocks, as the tests that run them read them: each block's language, its section
 * (the `## ` heading above it), its command lines (continuations joined, comments dropped) and the lines it
 * leaves to a person, each named before the block: `<!-- not run: <the line> — <why> -->` (as in docs/).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "@roadnerd/registry";

export interface NotRun {
  line: string;
  why: string;
}

export interface ReadmeBlock {
  section: string;
  lang: string;
  body: string;
  /** Shell blocks only: each command as a shell reads it, without its trailing comment. */
  lines: string[];
  notRun: NotRun[];
}

export const SHELL_LANGS = ["bash", "sh", "shell"];

/** A shell block's commands: `\`-continued lines joined, blank and comment lines dropped, `  # why` cut. */
export function commandLines(body: string): string[] {
  return body
    .replace(/\\\n\s*/g, "")
    .split("\n")
    .map((l) => l.replace(/\s+# .*$/, "").trim())
    .filter((l) => l && !l.startsWith("#"));
}

export function readmeBlocks(markdown: string): ReadmeBlock[] {
  const headings = [...markdown.matchAll(/^## (.+)$/gm)].map((m) => ({ at: m.index, title: m[1] ?? "" }));
  const fences = markdown.matchAll(/((?:<!-- not run: [^\n]*-->\n)*)[ ]*```(\w*)\n([\s\S]*?)```/g);
  return [...fences].map((m) => {
    const lang = m[2] ?? "";
    const body = m[3] ?? "";
    return {
      section: headings.filter((h) => h.at < m.index).at(-1)?.title ?? "",
      lang,
      body,
      lines: SHELL_LANGS.includes(lang) ? commandLines(body) : [],
      notRun: [...(m[1] ?? "").matchAll(/<!-- not run: (.+?) — (.+?) -->/g)].map((n) => ({
        line: n[1] ?? "",
        why: n[2] ?? "",
      })),
    };
  });
}

export const readRootReadme = () => readFileSync(join(REPO_ROOT, "README.md"), "utf8");

/**
 * The README's `docker compose …` lines as docker-compose arguments, in order: what test/containers runs
 * (`--build` there is `--no-build`: `scripts/containers.sh images` built the same Dockerfile's targets first,
 * from a base it can reach sealed).
 */
export function readmeComposeSteps(markdown = readRootReadme()): string[][] {
  return readmeBlocks(markdown)
    .flatMap((b) => b.lines)
    .filter((l) => l.startsWith("docker compose "))
    .map((l) =>
      l
        .slice("docker compose ".length)
        .split(/\s+/)
        .map((w) => (w === "--build" ? "--no-build" : w)),
    );
}
