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

/** The container runtime if we are in one: docker, podman, kubernetes, lxc, or another systemd-detected kind. */
export async function detectContainer(): Promise<string | null> {
  if (process.env.KUBERNETES_SERVICE_HOST) return "kubernetes";
  if (await exists("/.dockerenv")) return "docker";
  if (await exists("/run/.containerenv")) return "podman";
  const declared = (await readText("/run/systemd/container")).trim();
  if (declared) return declared;
  const cgroup = await readText("/proc/1/cgroup");
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
