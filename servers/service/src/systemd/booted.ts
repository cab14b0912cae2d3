/**
 * Is systemd PID 1 here? The same check as sd_booted(3): its runtime directory exists. Checked before any
 * process is spawned, so a container or a machine booted with another init gets a clear E_UNSUPPORTED rather
 * than systemctl's "Failed to connect to bus". journal_tail asks too: a journal on disk without a running
 * journald is a rescue or chroot case (read it by hand with `journalctl --directory`); answering from it
 * would pass old lines off as the machine's current state.
 */
import { statSync } from "node:fs";
import { DiagError } from "@roadnerd/conventions";

export function isBooted(dir: string): boolean {
  try {
    // No exception built for the common answer (a container: no systemd), which every call here pays for.
    return statSync(dir, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    return false;
  }
}

export function requireSystemd(config: { SYSTEMD_BOOTED_DIR: string }): void {
  if (isBooted(config.SYSTEMD_BOOTED_DIR)) return;
  throw new DiagError(
    "E_UNSUPPORTED",
    `systemd is not running as PID 1 on this machine (no ${config.SYSTEMD_BOOTED_DIR}): no units to ask about`,
    { hint: "a container or a machine with another init has no systemd units; ask the host instead" },
  );
}
