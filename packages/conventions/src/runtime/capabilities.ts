/** What this server can see of its host, reported on /healthz so an orchestrator knows before it calls. */
import { constants } from "node:fs";
import { access, readFile } from "node:fs/promises";
import { join } from "node:path";

export interface Capabilities {
  container: string | null;
  systemd_pid1: boolean;
  root: boolean;
  binaries: Record<string, boolean>;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path, constants.F_OK);
    return true;
  } catch {
    return false;
  }
}

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
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
  if (await exists(join(root, ".dockerenv"))) return "docker";
  if (await exists(join(root, "run/.containerenv"))) return "podman";
  const declared = (await readText(join(root, "run/systemd/container"))).trim() || env.container?.trim();
  if (declared) return declared;
  const cgroup = await readText(join(root, "proc/1/cgroup"));
  if (/libpod/.test(cgroup)) return "podman";
  if (/docker|containerd/.test(cgroup)) return "docker";
  if (/kubepods/.test(cgroup)) return "kubernetes";
  if (/lxc/.test(cgroup)) return "lxc";
  return null;
}

export async function findBinary(name: string, searchPath: string): Promise<boolean> {
  for (const dir of searchPath.split(":").filter(Boolean)) {
    try {
      await access(join(dir, name), constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}

export async function detectCapabilities(binaries: readonly string[], searchPath: string): Promise<Capabilities> {
  const [container, comm, found] = await Promise.all([
    detectContainer(),
    readText("/proc/1/comm"),
    Promise.all(binaries.map(async (b) => [b, await findBinary(b, searchPath)] as const)),
  ]);
  return {
    container,
    systemd_pid1: comm.trim() === "systemd",
    root: process.getuid?.() === 0,
    binaries: Object.fromEntries(found),
  };
}
