/**
 * Real mounts for tests (root only): tmpfs of a known size and inode count, loop-mounted ext4 images, bind
 * mounts. Everything made is recorded and undone by cleanup(), in reverse, even after a failure.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface ScratchMounts {
  /** A fresh directory under the system temp dir. */
  base: string;
  tmpfs(dir: string, options: string): string;
  ext4(dir: string, sizeMb: number): string;
  bind(from: string, to: string): string;
  remountReadOnly(dir: string): void;
  cleanup(): void;
}

const run = (cmd: string, args: string[]) => execFileSync(cmd, args, { stdio: ["ignore", "pipe", "pipe"] }).toString();

export function scratchMounts(prefix: string): ScratchMounts {
  const base = mkdtempSync(join(tmpdir(), prefix));
  const mounted: string[] = [];
  const mount = (args: string[], dir: string) => {
    mkdirSync(dir, { recursive: true });
    run("mount", [...args, dir]);
    mounted.push(dir);
    return dir;
  };
  return {
    base,
    tmpfs: (dir, options) => mount(["-t", "tmpfs", "-o", options, "tmpfs"], dir),
    ext4(dir, sizeMb) {
      const image = `${dir}.img`;
      run("truncate", ["-s", `${sizeMb}M`, image]);
      run("mkfs.ext4", ["-q", "-F", image]);
      return mount(["-o", "loop", image], dir);
    },
    bind: (from, to) => mount(["--bind", from], to),
    remountReadOnly: (dir) => void run("mount", ["-o", "remount,ro,bind", dir]),
    cleanup() {
      for (const dir of mounted.reverse()) {
        try {
          run("umount", [dir]);
        } catch {
          run("umount", ["-l", dir]);
        }
      }
      mounted.length = 0;
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/** `df -B1 --output=…` for one path, parsed (the target may contain spaces: it is the last column). */
export function dfRow(path: string) {
  const out = run("df", ["-B1", "--output=fstype,size,used,avail,pcent,itotal,iused,iavail,ipcent,target", path]);
  const line = out.trim().split("\n")[1] ?? "";
  const [fstype, size, used, avail, pcent, itotal, iused, iavail, ipcent, ...target] = line.trim().split(/\s+/);
  const pct = (s: string | undefined) => (s === "-" ? null : Number(s?.replace("%", "")));
  return {
    fs: fstype,
    size: BigInt(size ?? "0"),
    used: BigInt(used ?? "0"),
    avail: BigInt(avail ?? "0"),
    pcent: pct(pcent),
    itotal: Number(itotal),
    iused: Number(iused),
    iavail: Number(iavail),
    ipcent: pct(ipcent),
    target: target.join(" "),
  };
}

export const du = (args: string[]) => run("du", args);
