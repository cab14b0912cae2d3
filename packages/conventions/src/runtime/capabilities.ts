/**
 * What this server can see of its host, reported on /healthz so an orchestrator knows before it calls.
 * Synchronous: a handful of access() and small /proc and /run reads, microseconds each, made once, at the
 * first /healthz, which waited for a dozen thread-pool round trips in turn (the pool's threads started by the
 * first of them) on every start (issue 17, target 2).
 */
import { accessSync, closeSync, constants, fstatSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";

export interface Capabilities {
  container: string | null;
  systemd_pid1: boolean;
  root: boolean;
  binaries: Record<string, boolean>;
}

function exists(path: string): boolean {
  try {
    accessSync(path, constants.F_OK);
    return true;
  } catch {
    return false;
  }
}

/** Files read here are a line or a few (/proc/1/cgroup, /run/systemd/container): more is not read. */
const TEXT_BYTES_AT_MOST = 16 * 1024;

/**
 * A small regular file's text, or "". Opened without waiting and read only if regular: a FIFO or a device
 * mounted in its place must not hold the event loop (an attacker review bind-mounted a FIFO over /proc/1/comm).
 * /proc's files say size 0 and are regular, so the bound is in bytes read.
 */
function readText(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return "";
  }
  try {
    if (!fstatSync(fd).isFile()) return "";
    const buf = Buffer.alloc(TEXT_BYTES_AT_MOST);
    return buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)).toString("utf8");
  } catch {
    return "";
  } finally {
    closeSync(fd);
  }
}

/**
 * The container runtime if we are in one: docker, podman, kubernetes, lxc, or another systemd-detected kind.
 * Podman leaves out /run/.containerenv when the root is read-only (compose's read_only), so its `container`
 * variable (systemd's convention, set by podman and lxc) and its cgroup (libpod-<id>) count too. `root` and
 * `env` are for tests.
 */
export async function detectContainer(env: NodeJS.ProcessEnv = process.env, root = "/"): Promise<string | null> {
  if (env.KUBERNETES_SERVICE_HOST) return "kubernetes";
  if (exists(join(root, ".dockerenv"))) return "docker";
  if (exists(join(root, "run/.containerenv"))) return "podman";
  const declared = readText(join(root, "run/systemd/container")).trim() || env.container?.trim();
  if (declared) return declared;
  const cgroup = readText(join(root, "proc/1/cgroup"));
  if (/libpod/.test(cgroup)) return "podman";
  if (/docker|containerd/.test(cgroup)) return "docker";
  if (/kubepods/.test(cgroup)) return "kubernetes";
  if (/lxc/.test(cgroup)) return "lxc";
  return null;
}

/** As a shell's `command -v` finds a program: the first regular file by that name that may be run. */
export function findBinary(name: string, searchPath: string): boolean {
  for (const dir of searchPath.split(":").filter(Boolean)) {
    const path = join(dir, name);
    try {
      // A directory or a FIFO named like the program is not it (root may "execute" either by access()).
      if (!statSync(path).isFile()) continue;
      accessSync(path, constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}

export async function detectCapabilities(binaries: readonly string[], searchPath: string): Promise<Capabilities> {
  const container = await detectContainer();
  const comm = readText("/proc/1/comm");
  const found = binaries.map((b) => [b, findBinary(b, searchPath)] as const);
  return {
    container,
    systemd_pid1: comm.trim() === "systemd",
    root: process.getuid?.() === 0,
    binaries: Object.fromEntries(found),
  };
}
