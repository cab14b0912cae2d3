/** This process's network namespace, as `ip netns identify`/lsns name it: net:[inode]. */
import { readlinkSync } from "node:fs";

export function ownNetns(): string | null {
  try {
    return readlinkSync("/proc/self/ns/net");
  } catch {
    return null;
  }
}
