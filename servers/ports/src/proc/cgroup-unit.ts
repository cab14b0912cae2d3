/**
 * The systemd unit a process belongs to, from /proc/<pid>/cgroup: the unified (v2) line `0::<path>`, else the
 * v1 `name=systemd` hierarchy. The unit is the deepest `.service` or `.scope` in the path; under a user manager
 * (`user@1000.service/…`) a deeper unit is that user's own unit.
 */

export interface CgroupUnit {
  /** e.g. jenkins.service, session-2.scope; null when the process is in no unit (a container, no systemd). */
  unit: string | null;
  /** The uid whose user manager (user@<uid>.service) runs the unit, when it is a user unit. */
  user_unit_of: number | null;
}

const UNIT = /^[^/]+\.(service|scope)$/;

/** The cgroup path systemd manages: the v2 line, or the v1 name=systemd line when v2 says nothing. */
export function systemdCgroupPath(text: string): string | null {
  let v1: string | null = null;
  let v2: string | null = null;
  for (const line of text.split("\n")) {
    const first = line.indexOf(":");
    const second = line.indexOf(":", first + 1);
    if (first < 0 || second < 0) continue;
    const id = line.slice(0, first);
    const controllers = line.slice(first + 1, second);
    const path = line.slice(second + 1);
    if (id === "0" && controllers === "") v2 = path;
    else if (controllers === "name=systemd") v1 = path;
  }
  // Hybrid hierarchy: v2 mounted but empty ("/") while systemd tracks units in the v1 name=systemd tree.
  if (v2 && v2 !== "/") return v2;
  return v1 ?? v2;
}

export function parseCgroupUnit(text: string): CgroupUnit {
  const path = systemdCgroupPath(text);
  if (!path) return { unit: null, user_unit_of: null };
  const parts = path.split("/").filter(Boolean);
  let unit: string | null = null;
  let unitAt = -1;
  parts.forEach((p, i) => {
    if (UNIT.test(p)) {
      unit = p;
      unitAt = i;
    }
  });
  const managerAt = parts.findIndex((p) => /^user@\d+\.service$/.test(p));
  if (managerAt < 0 || unitAt <= managerAt) return { unit, user_unit_of: null };
  // The user manager itself runs in user@<uid>.service/init.scope: its unit is the user@ service.
  if (unit === "init.scope" && unitAt === managerAt + 1) return { unit: parts[managerAt] ?? null, user_unit_of: null };
  return { unit, user_unit_of: Number(/^user@(\d+)/.exec(parts[managerAt] ?? "")?.[1]) };
}
