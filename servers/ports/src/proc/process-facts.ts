/**
 * One process as /proc describes it: name, command line (masked, cut), user, state, resident memory, start
 * time, executable and systemd unit. Small files read synchronously: a few microseconds each.
 */
import { readFileSync, readlinkSync } from "node:fs";
import { cutText, maskArgv, maskCommandLine } from "@roadnerd/conventions";
import { parseCgroupUnit } from "./cgroup-unit.ts";
import type { UserName } from "./passwd.ts";

/** Longest command line we show (after masking). */
export const CMD_MAX_CHARS = 300;
/** USER_HZ: the unit of /proc/<pid>/stat times; 100 on every Linux architecture userspace sees. */
const CLOCK_TICKS = 100;

export interface ProcessFacts {
  pid: number;
  ppid: number;
  name: string;
  cmd: string;
  exe: string | null;
  unit: string | null;
  user_unit_of: number | null;
  user: string;
  uid: number;
  state: string;
  rss_mb: number;
  started: string | null;
}

function read(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** Boot time in seconds since the epoch (`btime` in /proc/stat). */
export function bootTime(): number {
  return Number(/^btime (\d+)$/m.exec(read("/proc/stat") ?? "")?.[1] ?? 0);
}

/**
 * `pid (comm) S ppid … starttime …`: comm may hold spaces and parentheses, so split after the last `)`.
 * `fields[0]` is field 3 (state), so field N is `fields[N - 3]`.
 */
export function statFields(text: string): { name: string; fields: string[] } | null {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  return { name: text.slice(open + 1, close), fields: text.slice(close + 2).split(" ") };
}

export function parseStat(text: string): { name: string; state: string; ppid: number; startTicks: number } | null {
  const stat = statFields(text);
  if (!stat) return null;
  const f = stat.fields;
  // Field 3 (state) is f[0]; field 4 (ppid) f[1]; field 22 (starttime) f[19].
  return { name: stat.name, state: f[0] ?? "?", ppid: Number(f[1]), startTicks: Number(f[19]) };
}

/**
 * Masking a command line (some forty regex passes per argument) was most of a process_info call: the last
 * few command lines shown are remembered, keyed by the very text read, so the answer is the same.
 */
const SHOWN_MEMO_MAX = 256;
const SHOWN_MEMO_MAX_CHARS = 4096;
const shownMemo = new Map<string, string>();

/** The command line shown: argv masked then cut; a kernel thread (empty cmdline) as `[name]`, like ps. */
export function shownCmd(cmdline: string, name: string): string {
  if (cmdline.length > SHOWN_MEMO_MAX_CHARS) return maskedCmd(cmdline, name);
  const key = `${name}\0${cmdline}`;
  let shown = shownMemo.get(key);
  if (shown === undefined) {
    shown = maskedCmd(cmdline, name);
    if (shownMemo.size >= SHOWN_MEMO_MAX) shownMemo.delete(shownMemo.keys().next().value as string);
    shownMemo.set(key, shown);
  }
  return shown;
}

function maskedCmd(cmdline: string, name: string): string {
  const argv = cmdline.split("\0");
  // Every trailing empty string: a process that set its title (Node's process.title) pads the rest of its
  // argv area with NULs, which joined with spaces showed as "roadnerd up           " (stop 32's new user).
  while (argv.at(-1) === "") argv.pop();
  if (argv.length === 0) return `[${name}]`;
  // A process that rewrote its title (nginx: master process …) leaves one string with spaces.
  const masked = argv.length === 1 ? maskCommandLine(argv[0] as string) : maskArgv(argv).join(" ");
  return cutText(masked, CMD_MAX_CHARS);
}

const STATE_WORDS: Record<string, string> = {
  R: "running",
  S: "sleeping",
  D: "disk sleep",
  T: "stopped",
  t: "tracing stop",
  Z: "zombie",
  X: "dead",
  I: "idle",
};

/** Everything about one pid, or null when it is gone (or was never there). */
export function processFacts(pid: number, userName: UserName, btime = bootTime()): ProcessFacts | null {
  const stat = parseStat(read(`/proc/${pid}/stat`) ?? "");
  if (!stat) return null;
  const status = read(`/proc/${pid}/status`) ?? "";
  const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? -1);
  const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
  let exe: string | null = null;
  try {
    exe = readlinkSync(`/proc/${pid}/exe`);
  } catch {
    // A kernel thread has none; another user's needs root.
  }
  const { unit, user_unit_of } = parseCgroupUnit(read(`/proc/${pid}/cgroup`) ?? "");
  const cmdline = read(`/proc/${pid}/cmdline`) ?? "";
  const startS = btime > 0 && Number.isFinite(stat.startTicks) ? btime + stat.startTicks / CLOCK_TICKS : null;
  return {
    pid,
    ppid: stat.ppid,
    name: shownName(stat.name, cmdline),
    cmd: shownCmd(cmdline, stat.name),
    exe,
    unit,
    user_unit_of,
    user: uid >= 0 ? userName(uid) : "?",
    uid,
    state: `${stat.state} (${STATE_WORDS[stat.state] ?? "unknown"})`,
    rss_mb: Math.round((rssKb / 1024) * 10) / 10,
    started: startS === null ? null : new Date(Math.round(startS * 1000)).toISOString(),
  };
}

/**
 * Thread names some runtimes give their main thread, which is the process's comm too: Node ≥ 24 calls it
 * "MainThread". "8080 is held by MainThread" says nothing; the program's own name (argv[0]'s base) does.
 */
// Node 24 names its main thread "MainThread", Node 26 "node-MainThread".
const MAIN_THREAD_NAMES = new Set(["MainThread", "node-MainThread"]);

export function shownName(comm: string, cmdline: string): string {
  if (!MAIN_THREAD_NAMES.has(comm)) return comm;
  const argv0 = cmdline.split("\0")[0] ?? "";
  return argv0.split("/").at(-1) || comm;
}

/** Just the name (comm, or the program's for a renamed main thread) of a pid, or null when it is gone. */
export function processName(pid: number): string | null {
  const comm = parseStat(read(`/proc/${pid}/stat`) ?? "")?.name;
  if (comm === undefined) return null;
  return MAIN_THREAD_NAMES.has(comm) ? shownName(comm, read(`/proc/${pid}/cmdline`) ?? "") : comm;
}
