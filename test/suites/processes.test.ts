import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { command } from "@roadnerd/conventions";
import { buildArgv, inputJsonSchema, matchesTemplate } from "@roadnerd/conventions/internal";
import {
  callTool,
  checkAllowed,
  fakeBinaries,
  isLive,
  liveProcessGroups,
  pidsWhere,
  testExec,
} from "@roadnerd/conventions/testing";
import { loadServer, selectedServers } from "@roadnerd/registry";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HOSTILE_VALUES, inputArb } from "./lib/schema-arbitrary.ts";
import { worldFor } from "./lib/worlds.ts";

/** Values an attacker would put in a slot. */
const INJECTION = [
  "-x",
  "--",
  "--help",
  "-",
  "=",
  "=x",
  "a=b",
  "a\u0000b",
  "a\nb",
  "a\rb",
  "a;id",
  "a|id",
  "$(id)",
  "`id`",
  "a b",
  "\u2010x",
  "\u2212x",
  "\uff0dx",
  "\u00adx",
  "x".repeat(64 * 1024),
  "../../etc/passwd",
  "/proc/self/environ",
  "/proc/self/mem",
  ".",
  "..",
  "*",
  "~root",
  ...HOSTILE_VALUES.filter((v): v is string => typeof v === "string"),
];

const servers = selectedServers();

describe("argv never leaves its template", () => {
  it.each(servers)("$name: every slot, the whole corpus", async ({ name }) => {
    const def = await loadServer(name);
    let tried = 0;
    for (const cmd of def.commands) {
      const slots = cmd.args.filter((a) => typeof a !== "string");
      for (const target of slots) {
        for (const bad of INJECTION) {
          tried += 1;
          const values = Object.fromEntries(slots.map((s) => [s.slot, s === target ? bad : "ok"]));
          let argv: string[];
          try {
            argv = buildArgv(cmd, values);
          } catch (err) {
            expect((err as { code?: string }).code).toMatch(/^E_(INVALID_INPUT|INTERNAL)$/);
            continue;
          }
          expect(matchesTemplate(argv, cmd.args)).toBe(true);
          expect(() => checkAllowed(def.commands, cmd.binary, argv)).not.toThrow();
          const at = cmd.args.indexOf(target);
          expect(argv[at]?.slice(target.prefix.length).startsWith("-")).toBe(false);
        }
      }
    }
    console.log(`processes ${name}: ${def.commands.length} commands, ${tried} slot injections`);
  });

  it.each(servers)(
    "$name: every tool, fuzzed, runs only its own templates",
    async (registered) => {
      const { name } = registered;
      const def = await loadServer(name);
      const binaries = [...new Set(def.commands.map((c) => c.binary))];
      // The server's README world (e.g. a booted systemd), so tools reach their commands instead of a
      // precondition error; the binaries themselves are the recording fakes below.
      const world = def.commands.length > 0 ? await worldFor(registered) : undefined;
      let runs = 0;
      try {
        for (const tool of def.tools.filter((t) => t.commands.length > 0)) {
          // Each fake records its argv (one line, arguments joined by \x01) and prints an empty JSON list.
          const bin = await fakeBinaries(
            Object.fromEntries(
              binaries.map((b) => [
                b,
                // One write per run (a whole line), so runs in parallel do not interleave.
                `t=$(/bin/mktemp); /usr/bin/printf '%s\\001' "$@" > "$t"; echo >> "$t"; /bin/cat "$t" >> "$(/usr/bin/dirname "$0")/argv.log"; /bin/rm -f "$t"; echo '[]'`,
              ]),
            ),
          );
          try {
            await fc.assert(
              fc.asyncProperty(
                inputArb(inputJsonSchema(tool.inputSchema), tool.example as Record<string, unknown>),
                async (input) => {
                  await callTool(def, tool, input as Record<string, unknown>, {
                    env: { ...world?.env, EXEC_PATH: bin.dir },
                  }).catch(() => {});
                },
              ),
              { numRuns: Number(process.env.FUZZ_RUNS ?? 20) },
            );
            const log = await readFile(join(bin.dir, "argv.log"), "utf8").catch(() => "");
            for (const line of log.split("\n").filter((l) => l.length > 0)) {
              runs += 1;
              const argv = line.split("\u0001").slice(0, -1);
              const fits = tool.commands.some((c) => matchesTemplate(argv, c.args));
              expect(fits, `${tool.name} ran: ${JSON.stringify(argv).slice(0, 200)}`).toBe(true);
            }
          } finally {
            await bin.cleanup();
          }
        }
      } finally {
        await world?.close();
      }
      console.log(`processes ${name}: ${runs} recorded runs, every one inside its tool's templates`);
    },
    120_000,
  );
});

describe("no process outlives its deadline", () => {
  it("1,000 forced timeouts leave no process behind", async () => {
    const marker = `${process.pid}${Date.now() % 100_000}`;
    // The program leaves a grandchild holding its pipes, then hangs: only a process-group kill ends both.
    const bin = await fakeBinaries({ hang: `/bin/sleep 30.${marker} & exec /bin/sleep 31.${marker}` });
    const hang = command("hang", []);
    const exec = testExec([hang], bin.dir);
    try {
      const codes: Record<string, number> = {};
      for (let batch = 0; batch < 40; batch++) {
        const results = await Promise.allSettled(
          Array.from({ length: 25 }, () => exec(hang, undefined, { timeoutMs: 20 })),
        );
        for (const r of results) {
          const code = r.status === "rejected" ? (r.reason as { code: string }).code : "resolved";
          codes[code] = (codes[code] ?? 0) + 1;
        }
      }
      expect(codes).toEqual({ E_TIMEOUT: 1000 });
      expect(liveProcessGroups()).toBe(0);
      // SIGKILL follows SIGTERM after a short grace: look for survivors a moment later, bounded.
      let survivors = survivorsOf(marker);
      for (let i = 0; i < 300 && survivors.length > 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        survivors = survivorsOf(marker);
      }
      expect(survivors).toEqual([]);
      console.log(`processes: 1000 forced timeouts, ${survivors.length} survivors`);
    } finally {
      await bin.cleanup();
    }
  }, 120_000);
});

/** Live (not zombie) processes whose command line carries the marker. */
function survivorsOf(marker: string): number[] {
  return pidsWhere("cmdline", (c) => c.includes(marker)).filter(isLive);
}
