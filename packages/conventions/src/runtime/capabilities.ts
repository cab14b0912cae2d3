/**
 * What this server can see of its host, reported on /healthz so an orchestrator knows before it calls.
 * Synchronous: a handful of access() and small /proc and /run reads, microseconds each, made once, at the
 * first /healthz, which waited for a dozen thread-pool round trips in turn (the pool's threads started by the
 * first of them) on every start (issue 17, target 2).
 */
import { accessSync, constants, readFileSync } from "node:fs";
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

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
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

export function findBinary(name: string, searchPath: string): boolean {
  for (const dir of searchPath.split(":").filter(Boolean)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
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
