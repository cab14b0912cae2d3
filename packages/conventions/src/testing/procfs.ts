/** What tests and the bench read of processes from /proc, outside the process itself. */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { procState } from "../process/proc-state.ts";

/** Resident memory in MB. */
export function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
}

/** Running: not gone, and not a zombie waiting for a reaper that is not ours. */
export function isLive(pid: number): boolean {
  const state = procState(pid);
  return state !== undefined && state !== "Z";
}

/** Every process whose /proc/<pid>/<file> (status, cmdline) passes `test`. */
export function pidsWhere(file: "status" | "cmdline", test: (text: string) => boolean): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (test(readFileSync(`/proc/${entry}/${file}`, "utf8"))) found.push(Number(entry));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return found;
}

/** The socket inodes this process holds, from its /proc/self/fd links. */
export function ownSocketInodes(): Set<number> {
  const out = new Set<number>();
  for (const fd of readdirSync("/proc/self/fd")) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m) out.add(Number(m[1]));
    } catch {}
  }
  return out;
}
