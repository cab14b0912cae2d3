// Whether this process runs sealed: its network namespace has no interface but loopback. (/proc/net/dev
// follows the reading process's namespace; /sys/class/net shows the one sysfs was mounted in.)
import { readFileSync } from "node:fs";

export function isSealed() {
  try {
    const lines = readFileSync("/proc/net/dev", "utf8").split("\n").slice(2);
    const names = lines.map((l) => l.split(":")[0]?.trim()).filter(Boolean);
    return names.length > 0 && names.every((name) => name === "lo");
  } catch {
    return false;
  }
}
