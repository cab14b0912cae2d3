/**
 * Configurations for the paths that never reach systemd: a machine where it is not PID 1 (this one: the default
 * SYSTEMD_BOOTED_DIR does not exist), and one where it is but the binaries are missing or only record their argv.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fakeBinaries } from "@roadnerd/conventions/testing";

/** The machine's own root: is systemd PID 1 here? The tests that expect E_UNSUPPORTED check this first. */
export { isBooted } from "../../src/systemd/booted.ts";

export interface FakeSystemd {
  /** Env for callTool: systemd "booted" (a directory that exists) and EXEC_PATH at the fakes. */
  env: Record<string, string>;
  /** Every argv a fake was run with, one array per run. */
  runs(): Promise<string[][]>;
  cleanup(): Promise<void>;
}

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

/**
 * systemctl and journalctl that log their argv and print `output` (default: nothing), or `byVerb[$1]` when their
 * first argument is a key of it (recorded output per command). None at all with `missing`.
 */
export async function fakeSystemd(
  options: { missing?: boolean; output?: string; byVerb?: Record<string, string> } = {},
): Promise<FakeSystemd> {
  const booted = await mkdtemp(join(tmpdir(), "rn-booted-"));
  // One write per run (a whole line), so runs in parallel do not interleave.
  const script = [
    "t=$(/bin/mktemp)",
    `/usr/bin/printf '%s\\001' "$(/usr/bin/basename "$0")" "$@" > "$t"`,
    'echo >> "$t"',
    '/bin/cat "$t" >> "$(/usr/bin/dirname "$0")/argv.log"',
    '/bin/rm -f "$t"',
    `case "$1" in ${Object.entries(options.byVerb ?? {})
      .map(([verb, out]) => `${verb}) /usr/bin/printf '%s' ${quote(out)} ;;`)
      .join(" ")} *) /usr/bin/printf '%s' ${quote(options.output ?? "")} ;; esac`,
  ].join("; ");
  const bin = await fakeBinaries(options.missing ? {} : { systemctl: script, journalctl: script });
  return {
    env: { SYSTEMD_BOOTED_DIR: booted, EXEC_PATH: bin.dir },
    async runs() {
      const log = await readFile(join(bin.dir, "argv.log"), "utf8").catch(() => "");
      return log
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split("\u0001").slice(0, -1));
    },
    async cleanup() {
      await bin.cleanup();
      await rm(booted, { recursive: true, force: true });
    },
  };
}
