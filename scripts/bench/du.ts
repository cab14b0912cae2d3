/**
 * top_consumers against `du -x -d 2` on the same tree: /usr warm (default), and in --full /usr cold (page cache
 * dropped before each side, order alternated) and a 1-million-file tree the bench builds. Sizes are checked too:
 * the walk's allocated total and every directory it lists must equal du's to the KiB. Target: ≥ 1.0× du's speed.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { f1, loadavg, ms, type Proc, pct } from "./lib.ts";

const run = promisify(execFile);

interface Walk {
  entries: Array<{ name: string; type: string; size_mb: number }>;
  scanned: { bytes: number };
  truncated: boolean;
}

export async function topConsumers(srv: Proc, path: string): Promise<Walk> {
  const res = await fetch(`${srv.url}/actions/top_consumers`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ path, depth: 2, n: 20, timeout_ms: 15_000 }),
  });
  if (res.status !== 200) throw new Error(`top_consumers ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Walk;
}

/** du -x -d 2 -B1 PATH → bytes per path. */
export async function du(path: string): Promise<Map<string, number>> {
  const { stdout } = await run("du", ["-x", "-d", "2", "-B1", path], { maxBuffer: 64 * 1024 * 1024 });
  const out = new Map<string, number>();
  for (const line of stdout.split("\n")) {
    const tab = line.indexOf("\t");
    if (tab > 0) out.set(line.slice(tab + 1), Number(line.slice(0, tab)));
  }
  return out;
}

/** Empty string when the sizes agree; else what differs. */
export function compare(path: string, walk: Walk, sizes: Map<string, number>): string {
  const diffs: string[] = [];
  const total = sizes.get(path) ?? -1;
  if (Math.floor(walk.scanned.bytes / 1024) !== Math.floor(total / 1024))
    diffs.push(`total ${walk.scanned.bytes} vs du ${total}`);
  for (const e of walk.entries) {
    if (e.type !== "dir") continue;
    const bytes = sizes.get(join(path, e.name));
    if (bytes === undefined || Math.round((bytes * 100) / 1048576) / 100 !== e.size_mb)
      diffs.push(`${e.name} ${e.size_mb} MiB vs du ${bytes}`);
  }
  if (walk.truncated) diffs.push("walk truncated");
  return diffs.slice(0, 3).join("; ");
}

/**
 * CPU time in ms of a server and everything it runs (utime + stime of the process and of its live descendants,
 * the walker children of ADR 0059 among them, + the cutime + cstime of those it reaped), or of the bench's
 * waited-for children (cutime + cstime): the work each side does, which a loaded machine inflates far less than
 * wall time.
 */
export function cpuMs(pid: number | "children"): number {
  const fields = (p: number | "self") => {
    const stat = readFileSync(`/proc/${p}/stat`, "utf8");
    return stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .map(Number);
  };
  if (pid === "children") {
    const f = fields("self");
    return ((f[13] ?? 0) + (f[14] ?? 0)) * 10;
  }
  let ticks = 0;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      const f = fields(p);
      ticks += (f[11] ?? 0) + (f[12] ?? 0) + (f[13] ?? 0) + (f[14] ?? 0);
    } catch {
      // Gone meanwhile.
    }
  }
  return ticks * 10;
}

/** The live descendants of a process, from /proc/<pid>/task/<tid>/children. */
function descendants(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    let kids = "";
    try {
      kids = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8");
    } catch {
      continue;
    }
    for (const k of kids.trim().split(" ").filter(Boolean)) out.push(Number(k), ...descendants(Number(k)));
  }
  return out;
}

function dropCaches(): void {
  writeFileSync("/proc/sys/vm/drop_caches", "3");
}

export async function benchDu(srv: Proc, path: string, label: string, pairsN: number, cold: boolean): Promise<void> {
  const ours: number[] = [];
  const theirs: number[] = [];
  const cpu = { ours: 0, theirs: 0 };
  let sizes = "";
  if (!cold) {
    await topConsumers(srv, path);
    await du(path);
  }
  for (let i = 0; i < pairsN; i++) {
    for (const side of i % 2 ? ["ours", "du"] : ["du", "ours"]) {
      if (cold) dropCaches();
      const t = process.hrtime.bigint();
      if (side === "ours") {
        const c = cpuMs(srv.pid);
        const walk = await topConsumers(srv, path);
        ours.push(ms(t));
        cpu.ours += cpuMs(srv.pid) - c;
        // Sizes against the du of the same round (nothing writes under the tree meanwhile).
        if (i === 0) sizes = compare(path, walk, await du(path));
      } else {
        const c = cpuMs("children");
        await du(path);
        theirs.push(ms(t));
        cpu.theirs += cpuMs("children") - c;
      }
    }
  }
  const speed = pct(theirs, 50) / pct(ours, 50);
  console.log(
    `  top_consumers d=2 ${label.padEnd(24)} p50 ${f1(pct(ours, 50))} ms vs du -x -d 2 ${f1(pct(theirs, 50))} ms → ${speed.toFixed(2)}× du's speed${speed >= 1 ? "" : "!"} (target ≥ 1.0; du's CPU time ÷ ours ${(cpu.theirs / cpu.ours).toFixed(2)}; ${pairsN} pairs; sizes ${sizes ? `DIFFER: ${sizes}` : "equal to the KiB"}; ${loadavg()})`,
  );
}

/**
 * dirs × 10 subdirectories × files: a tree of dirs*10*files files in the temp dir (one in ten holds up to
 * 3.6 kB), or undefined, said why, when the temp dir's filesystem lacks the room: for 1M files ~0.5 GiB of
 * blocks and 1M inodes, asked for twice over so the bench never fills a disk others share.
 */
export function buildTree(files: number): { base: string; path: string; remove(): void } | undefined {
  const fs = statfsSync(tmpdir());
  const needBytes = files * 1024;
  const needInodes = files * 2;
  if (fs.bavail * fs.bsize < needBytes || (fs.files > 0 && fs.ffree < needInodes)) {
    console.log(
      `  (no ${files}-file tree: ${tmpdir()} has ${Math.round((fs.bavail * fs.bsize) / 2 ** 20)} MiB and ${fs.ffree} inodes free; needs ${Math.round(needBytes / 2 ** 20)} MiB and ${needInodes})`,
    );
    return undefined;
  }
  const base = mkdtempSync(join(tmpdir(), "rn-bench-tree-"));
  const root = join(base, "tree");
  const perDir = 100;
  const dirs = Math.ceil(files / perDir / 10);
  const remove = () => rmSync(base, { recursive: true, force: true });
  try {
    for (let i = 0; i < dirs; i++) {
      for (let j = 0; j < 10; j++) {
        const dir = join(root, `d${i}`, `s${j}`);
        mkdirSync(dir, { recursive: true });
        for (let k = 0; k < perDir; k++) writeFileSync(join(dir, `f${k}`), k % 10 ? "" : "x".repeat(k * 40));
      }
    }
  } catch (err) {
    // A tree half made (ENOSPC, EDQUOT) is removed, not left in the temp dir.
    remove();
    throw err;
  }
  return { base, path: root, remove };
}
