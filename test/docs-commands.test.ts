// Every command line in docs/*.md runs here as a newcomer types it: each ```bash block's lines in order, in a
// copy of the repository (its tracked and new files, dependencies installed offline from the pnpm store), sealed
// like the rest of the suite. A line no test can run (the whole suite, root) is named before its block,
// `<!-- not run: <the line> — <why> -->`, and that list stays short. After `pnpm new-server <name>`, the new
// server is held to what the doc promises: it builds, its bin answers, it lints, its tests and the
// generated-files check pass. Inline commands (`pnpm bench`, `node scripts/…`) must name real scripts and files.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "@roadnerd/registry";
import { scaledMs } from "@roadnerd/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { isHelpTopic } from "../packages/orchestrator/src/cli/help.ts";
import { asRunHere } from "./lib/doc-example.ts";
import { copyOfRepo, removeCopies, sh } from "./lib/repo-copy.ts";

/** Lines the docs may leave to a person: kept short on purpose (each needs a reason in its doc). */
const MAX_NOT_RUN = 3;

interface Block {
  doc: string;
  lines: string[];
  notRun: Array<{ line: string; why: string }>;
}

const docs = readdirSync(join(REPO_ROOT, "docs")).filter((f) => f.endsWith(".md"));
const read = (doc: string) => readFileSync(join(REPO_ROOT, "docs", doc), "utf8");

function blocksOf(doc: string): Block[] {
  const found = read(doc).matchAll(/((?:<!-- not run: [^\n]*-->\n)*)```(?:bash|sh|shell)\n([\s\S]*?)```/g);
  return [...found].map((m) => ({
    doc,
    lines: (m[2] ?? "")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#")),
    notRun: [...(m[1] ?? "").matchAll(/<!-- not run: (.+?) — (.+?) -->/g)].map((n) => ({
      line: n[1] ?? "",
      why: n[2] ?? "",
    })),
  }));
}

const blocks = docs.flatMap(blocksOf);

afterAll(removeCopies);

describe("docs/*.md command lines", () => {
  it("the lines not run are few, each names a line of its block and says why", () => {
    const notRun = blocks.flatMap((b) => b.notRun.map((n) => ({ ...n, lines: b.lines })));
    expect(notRun.length).toBeLessThanOrEqual(MAX_NOT_RUN);
    for (const n of notRun) {
      expect(n.lines, n.line).toContain(n.line);
      expect(n.why.length, n.line).toBeGreaterThan(10);
    }
  });

  const runnable = blocks.filter((b) => b.lines.some((l) => !b.notRun.some((n) => n.line === l)));
  it("there is something to run (the parser finds the blocks)", () => {
    expect(runnable.map((b) => b.doc)).toContain("adding-a-server.md");
  });

  it.each(runnable.map((b, i) => [b.doc, i, b] as const))(
    "%s (block %i) runs as written",
    async (_doc, _i, block) => {
      const repo = await copyOfRepo();
      // Run twice: as a newcomer does, then as someone who followed it already (its server now exists: the
      // example then runs under a free name, so this test holds in their checkout too).
      for (let round = 0; round < (block.lines.some((l) => l.startsWith("pnpm new-server ")) ? 2 : 1); round++) {
        const { lines, created } = asRunHere(block.lines, (name) => existsSync(join(repo, "servers", name)));
        for (const [i, line] of lines.entries()) {
          if (block.notRun.some((n) => n.line === block.lines[i])) continue;
          const r = await sh(line, repo);
          expect(r.code, `${line}\n${r.out.slice(-3000)}`).toBe(0);
        }
        for (const name of created) await holdsTheDocsPromise(repo, name);
      }
    },
    scaledMs(900_000),
  );
});

/** "The new server already builds, lints, passes the suite and answers from its bin" (adding-a-server.md). */
async function holdsTheDocsPromise(repo: string, name: string): Promise<void> {
  const checks: Array<[string, Record<string, string>?]> = [
    ["pnpm build", { ROADNERD_ONLY: name }],
    [`pnpm exec roadnerd-${name} --help`],
    [`pnpm exec biome check servers/${name}`],
    [`node node_modules/vitest/vitest.mjs run servers/${name} test/generated.test.ts`],
  ];
  for (const [line, env] of checks) {
    const r = await sh(line, repo, env);
    expect(r.code, `${line}\n${r.out.slice(-3000)}`).toBe(0);
    if (line.includes("--help")) expect(r.out).toContain(`usage: roadnerd-${name} [--stdio]`);
  }
}

describe("a doc's new-server example where its server exists already", () => {
  it("runs under the first free name, every mention renamed, other words kept", () => {
    const lines = [
      'pnpm new-server battery --summary "Battery charge"',
      "pnpm exec roadnerd-battery --help",
      "ls batterybox",
    ];
    const taken = new Set(["battery", "battery-2"]);
    expect(asRunHere(lines, (n) => taken.has(n))).toEqual({
      lines: [
        'pnpm new-server battery-3 --summary "Battery charge"',
        "pnpm exec roadnerd-battery-3 --help",
        "ls batterybox",
      ],
      created: ["battery-3"],
    });
    expect(asRunHere(lines, () => false)).toEqual({ lines, created: ["battery"] });
  });
});

describe("docs/*.md inline commands", () => {
  const scripts = Object.keys(JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).scripts);
  const spans = docs.flatMap((doc) =>
    [...read(doc).matchAll(/`((?:pnpm|node|bash|roadnerd) [^`]+)`/g)].map((m) => ({ doc, span: m[1] ?? "" })),
  );

  it("name a root script, a roadnerd command and files that exist", () => {
    expect(spans.length).toBeGreaterThan(5);
    for (const { doc, span } of spans) {
      const [tool, first = ""] = span.split(/\s+/);
      if (tool === "pnpm" && !["install", "exec"].includes(first)) expect(scripts, `${doc}: ${span}`).toContain(first);
      if (tool === "roadnerd") {
        for (const command of first.split("/")) expect(isHelpTopic(command), `${doc}: ${span}`).toBe(true);
      }
      for (const path of span.split(/\s+/).filter((w) => /^[\w.-]+\/[\w./-]+\.(ts|mjs|sh|md|ya?ml|json)$/.test(w))) {
        expect(existsSync(join(REPO_ROOT, path)), `${doc}: ${span}`).toBe(true);
      }
    }
  });
});
