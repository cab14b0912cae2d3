/**
 * A real systemd, booted as PID 1 in its own PID, mount and cgroup namespaces over an overlay of the root
 * filesystem (never on the machine's own root: systemd-tmpfiles would wipe the host's /tmp; inside, tmpfiles is
 * masked too, and the checkout is bound in read-only). The test's units
 * and a test target are written into the overlay's /etc/systemd/system; systemd starts only that target.
 * Processes reach it with `nsenter -t <pid> -p -m -r -w` (the network namespace is shared: a server started
 * inside listens on the caller's 127.0.0.1). SIGKILL of that systemd ends its namespaces and frees every mount;
 * the cgroup subtree it filled and the mountpoint directory are removed by `stop()` (and, as a last resort,
 * when the test process exits or is told to). A test process killed outright (SIGKILL) takes systemd with
 * it (parent-death signals on unshare and on systemd); the empty cgroup and directory it leaves are swept at
 * the next boot. Needs root. Boots in about 1–2 s.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./repo-root.ts";
import { type SpawnedServer, type SpawnOptions, spawnServer } from "./spawn-server.ts";

/** The target systemd boots into: it wants journald and every unit the caller installs with `start: true`. */
export const HARNESS_TARGET = "roadnerd-test.target";
export const DEFAULT_BOOT_TIMEOUT_MS = 20_000;

export interface HarnessUnit {
  /** A full unit name, e.g. `rn-sleeper.service`. */
  name: string;
  /** The unit file's text. */
  body: string;
  /** Wanted by the test target, so it starts at boot (default true). */
  start?: boolean;
}

export interface BootOptions {
  units?: readonly HarnessUnit[];
  /** Bound on the wait for the boot to finish (default 20 s). */
  timeoutMs?: number;
}

export interface RunResult {
  stdout: string;
  stderr: string;
  status: number | null;
}

/** Host-side units that would touch the real machine through the shared /dev and /sys: masked in the overlay. */
const MASKED = [
  "systemd-udevd.service",
  "systemd-udevd-control.socket",
  "systemd-udevd-kernel.socket",
  "systemd-udev-trigger.service",
  "modprobe@.service",
  // tmpfiles would empty /tmp (where a checkout may live) and create nodes in the host's /dev (bound in).
  "systemd-tmpfiles-setup.service",
  "systemd-tmpfiles-setup-dev.service",
  "systemd-tmpfiles-clean.service",
  "systemd-tmpfiles-clean.timer",
];

const UNIT_NAME = /^[A-Za-z0-9:_.@-]{1,200}\.(service|target|timer|socket|path)$/;

/** Why a booted systemd cannot be had here, or undefined when it can (under CI=true it never skips). */
export function systemdSkipReason(): string | undefined {
  if (process.env.CI === "true") return undefined;
  if (process.getuid?.() !== 0) return "needs root to boot systemd in its own namespaces";
  if (process.env.ROADNERD_NO_NETNS) return `namespaces unavailable: ${process.env.ROADNERD_NO_NETNS}`;
  if (!existsSync("/lib/systemd/systemd")) return "systemd is not installed (/lib/systemd/systemd)";
  return undefined;
}

/** The cgroup v2 hierarchy to give systemd a subtree of: hybrid hosts mount it at /sys/fs/cgroup/unified. */
function cgroup2Root(): string {
  for (const dir of ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]) {
    if (existsSync(join(dir, "cgroup.subtree_control"))) return dir;
  }
  throw new Error("no cgroup v2 hierarchy found at /sys/fs/cgroup/unified or /sys/fs/cgroup");
}

const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** The script run inside the new namespaces: overlay, API filesystems, units, then exec systemd as PID 1. */
function bootScript(dir: string, units: readonly HarnessUnit[]): string {
  const root = `${dir}/root`;
  const repo = REPO_ROOT.replace(/\/$/, "");
  const sys = `${root}/etc/systemd/system`;
  const wants = ["systemd-journald.service", ...units.filter((u) => u.start !== false).map((u) => u.name)];
  const lines = [
    "set -eu",
    `mount -t tmpfs -o size=256m,mode=755 roadnerd-systemd ${q(dir)}`,
    `mkdir -p ${q(`${dir}/upper`)} ${q(`${dir}/work`)} ${q(root)}`,
    `mount -t overlay overlay -o lowerdir=/,upperdir=${q(`${dir}/upper`)},workdir=${q(`${dir}/work`)} ${q(root)}`,
    `mount -t proc proc ${q(`${root}/proc`)}`,
    `mount -t tmpfs -o mode=755 tmpfs ${q(`${root}/run`)}`,
    // The checkout, read-only at its own path, so the built servers run inside wherever it lives (also on a
    // /tmp or /work that is a mount of its own, which the overlay of / would not show).
    `mkdir -p ${q(`${root}${repo}`)}`,
    `mount --bind ${q(repo)} ${q(`${root}${repo}`)}`,
    `mount -o remount,bind,ro ${q(`${root}${repo}`)}`,
    `mount --rbind /sys ${q(`${root}/sys`)}`,
    // Inside the cgroup namespace this cgroup2 is rooted at the subtree made for this harness.
    `mount -t cgroup2 cgroup2 ${q(`${root}/sys/fs/cgroup`)}`,
    `mount --rbind /dev ${q(`${root}/dev`)}`,
    `mkdir -p ${q(sys)}`,
    ...MASKED.map((u) => `ln -sf /dev/null ${q(`${sys}/${u}`)}`),
    `printf '%s\\n' ${q(`[Unit]\nDescription=RoadNerd test target\nWants=${wants.join(" ")}\nAfter=${wants.join(" ")}`)} > ${q(`${sys}/${HARNESS_TARGET}`)}`,
    ...units.map((u) => `printf '%s\\n' ${q(u.body)} > ${q(`${sys}/${u.name}`)}`),
    `exec chroot ${q(root)} /usr/bin/env -i container=roadnerd-test /lib/systemd/systemd --system --unit=${HARNESS_TARGET}`,
  ];
  return lines.join("\n");
}

const live = new Set<BootedSystemd>();
let hooksInstalled = false;

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  const stopAll = () => {
    for (const h of live) h.stopSync();
  };
  process.once("exit", stopAll);
  for (const [signal, code] of [
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const) {
    process.once(signal, () => {
      stopAll();
      process.exit(code);
    });
  }
}

export class BootedSystemd {
  /** systemd's PID as seen from here. */
  readonly pid: number;
  readonly #unsharePid: number;
  readonly #dir: string;
  readonly #cgroup: string;
  readonly #servers: SpawnedServer[] = [];
  readonly #binDirs: string[] = [];
  #stopped = false;

  constructor(pid: number, unsharePid: number, dir: string, cgroup: string) {
    this.pid = pid;
    this.#unsharePid = unsharePid;
    this.#dir = dir;
    this.#cgroup = cgroup;
    live.add(this);
    installHooks();
  }

  /** Prefix that runs a command inside: PID, mount namespace, root and working directory of this systemd. */
  get nsenter(): string[] {
    return ["nsenter", "-t", String(this.pid), "-p", "-m", "-r", "-w"];
  }

  /** A path inside the booted system, seen from here (e.g. its /run/systemd/system). */
  path(inside: string): string {
    return `/proc/${this.pid}/root${inside}`;
  }

  /** Run a command inside and wait for it (bounded): for test steps such as `systemctl start`. */
  run(argv: readonly string[], timeoutMs = 10_000): RunResult {
    const r = spawnSync(this.nsenter[0] as string, [...this.nsenter.slice(1), ...argv], {
      encoding: "utf8",
      timeout: timeoutMs,
      env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", LC_ALL: "C", TZ: "UTC" },
    });
    return { stdout: r.stdout ?? "", stderr: r.stderr ?? "", status: r.status };
  }

  /** `systemctl <args>` inside; throws with its stderr when it fails. */
  systemctl(...args: string[]): string {
    const r = this.run(["systemctl", ...args]);
    if (r.status !== 0) throw new Error(`systemctl ${args.join(" ")} failed (${r.status}): ${r.stderr.trim()}`);
    return r.stdout;
  }

  /** Poll `check` every 100 ms until it holds or `timeoutMs` passes (then throw, naming `what`). */
  async waitFor(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      if (check()) return;
      if (Date.now() > until) throw new Error(`systemd harness: ${what} did not happen within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * A directory of wrappers, one per binary, that run the binary inside this systemd (`nsenter … /usr/bin/<name>
   * "$@"`): as EXEC_PATH, a server running out here runs its real commands against this real systemd. Removed
   * with the harness.
   */
  binariesInside(names: readonly string[]): string {
    const dir = mkdtempSync(`/tmp/rn-systemd-${process.pid}-bin-`);
    this.#binDirs.push(dir);
    for (const name of names) {
      if (!/^[a-z][a-z0-9-]{0,31}$/.test(name)) throw new Error(`systemd harness: bad binary name ${name}`);
      const path = join(dir, name);
      writeFileSync(
        path,
        `#!/bin/sh
exec /usr/bin/nsenter -t ${this.pid} -p -m -r -w /usr/bin/${name} "$@"
`,
      );
      chmodSync(path, 0o755);
    }
    return dir;
  }

  /** A built server started inside (spawnServer wrapped in nsenter); stopped with the harness. */
  async spawnServer(name: string, options: SpawnOptions = {}): Promise<SpawnedServer> {
    const server = await spawnServer(name, { ...options, wrap: [...this.nsenter, ...(options.wrap ?? [])] });
    this.#servers.push(server);
    return server;
  }

  async stop(): Promise<void> {
    for (const s of this.#servers.splice(0)) await s.stop();
    this.stopSync();
  }

  /** SIGKILL systemd (its PID namespace and every process in it go with it), then remove what is left here. */
  stopSync(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    live.delete(this);
    for (const s of this.#servers.splice(0)) s.child.kill("SIGKILL");
    for (const d of this.#binDirs.splice(0)) rmSync(d, { recursive: true, force: true });
    killPid(this.pid);
    killPid(this.#unsharePid);
    // The kernel reaps the namespace's processes asynchronously: wait (bounded) until the cgroup is empty.
    const until = Date.now() + 5000;
    while (!removeTree(this.#cgroup) && Date.now() < until) spawnSync("sleep", ["0.05"]);
    try {
      rmdirSync(this.#dir);
    } catch {
      // Still a mountpoint for a moment while the mount namespace goes away: retry once after a pause.
      spawnSync("sleep", ["0.2"]);
      try {
        rmdirSync(this.#dir);
      } catch {}
    }
  }
}

function killPid(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // ESRCH: already gone.
  }
}

/** rmdir a cgroup subtree, deepest first; true when it is gone. */
function removeTree(dir: string): boolean {
  if (!existsSync(dir)) return true;
  try {
    for (const entry of readdirSync(dir)) {
      const child = join(dir, entry);
      if (statSync(child).isDirectory()) removeTree(child);
    }
    rmdirSync(dir);
    return true;
  } catch {
    return false;
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function commOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

let boots = 0;

/**
 * What a harness whose test process was SIGKILLed left behind (its systemd died with it, see bootSystemd):
 * an empty cgroup tree and an empty directory, both named after the dead process. Removed at the next boot.
 */
function sweepLeftovers(cgroupRoot: string): void {
  const dead = (name: string, prefix: string) => {
    const pid = Number(name.slice(prefix.length).split("-")[0]);
    if (!Number.isInteger(pid) || pid <= 0) return false;
    try {
      // Gone, or a zombie not yet reaped.
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
    } catch {
      return true;
    }
  };
  for (const entry of readdirSync(cgroupRoot)) {
    if (entry.startsWith("roadnerd-harness-") && dead(entry, "roadnerd-harness-")) removeTree(join(cgroupRoot, entry));
  }
  for (const entry of readdirSync("/tmp")) {
    if (!entry.startsWith("rn-systemd-") || !dead(entry, "rn-systemd-")) continue;
    // Wrapper directories are ours whole; a mountpoint directory goes only when empty.
    try {
      if (/^rn-systemd-\d+-bin-/.test(entry)) rmSync(join("/tmp", entry), { recursive: true, force: true });
      else rmdirSync(join("/tmp", entry));
    } catch {}
  }
}

/**
 * Boot systemd with `units` and wait (bounded) until it has finished starting the test target (`running` or,
 * with a failed unit, `degraded`). The caller must `stop()` it (in afterAll / finally).
 */
export async function bootSystemd(options: BootOptions = {}): Promise<BootedSystemd> {
  const units = options.units ?? [];
  for (const u of units) if (!UNIT_NAME.test(u.name)) throw new Error(`systemd harness: bad unit name ${u.name}`);
  const timeoutMs = options.timeoutMs ?? DEFAULT_BOOT_TIMEOUT_MS;
  boots += 1;
  const id = `roadnerd-harness-${process.pid}-${boots}`;
  const root = cgroup2Root();
  sweepLeftovers(root);
  const cgroup = join(root, id);
  const dir = mkdtempSync(`/tmp/rn-systemd-${process.pid}-`);
  // Move the shell into its own cgroup, then give it a cgroup namespace rooted there: systemd fills only that.
  const outer = [
    `mkdir ${q(cgroup)}`,
    `echo $$ > ${q(`${cgroup}/cgroup.procs`)}`,
    // If this process dies without stopping it (SIGKILL), unshare gets SIGKILL, and systemd with it.
    `exec setpriv --pdeathsig KILL unshare --kill-child=SIGKILL --cgroup --mount --pid --propagation private sh -c ${q(bootScript(dir, units))}`,
  ].join(" && ");
  const child = spawn("sh", ["-c", outer], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    if (stderr.length < 8192) stderr += d.toString();
  });
  const unsharePid = child.pid as number;
  const until = Date.now() + timeoutMs;
  const fail = (why: string): never => {
    killPid(unsharePid);
    for (const pid of childrenOf(unsharePid)) killPid(pid);
    const until = Date.now() + 5000;
    while (!removeTree(cgroup) && Date.now() < until) spawnSync("sleep", ["0.05"]);
    try {
      rmdirSync(dir);
    } catch {}
    throw new Error(`systemd harness: ${why}; stderr: ${stderr.trim().slice(0, 2000)}`);
  };
  let pid: number | undefined;
  while (pid === undefined) {
    if (child.exitCode !== null) fail(`the boot script exited with ${child.exitCode}`);
    pid = childrenOf(unsharePid).find((p) => commOf(p) === "systemd");
    if (pid === undefined) {
      if (Date.now() > until) fail("systemd did not start");
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const booted = new BootedSystemd(pid, unsharePid, dir, cgroup);
  try {
    await booted.waitFor(
      `boot into ${HARNESS_TARGET}`,
      () => {
        if (child.exitCode !== null) throw new Error(`systemd exited with ${child.exitCode}`);
        const state = booted.run(["systemctl", "is-system-running"], 5000).stdout.trim();
        return state === "running" || state === "degraded";
      },
      Math.max(1000, until - Date.now()),
    );
  } catch (err) {
    booted.stopSync();
    throw new Error(`${(err as Error).message}; stderr: ${stderr.trim().slice(0, 2000)}`);
  }
  return booted;
}
