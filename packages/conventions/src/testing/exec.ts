/**
 * The kernel's exec for a server's tests and benches: the very commands its tools declare, spawned the way a
 * tool spawns them (a bench's baseline), or a test's proof that an undeclared command is refused.
 */
import type { Command } from "../define/command.ts";
import { DEFAULT_EXEC_PATH } from "../define/config.ts";
import { createExec, type Exec } from "../exec/exec.ts";

/** An exec that runs only `commands`, finding binaries on `execPath` (default: the kernel's EXEC_PATH). */
export function testExec(commands: readonly Command[], execPath: string = DEFAULT_EXEC_PATH): Exec {
  return createExec(commands, execPath);
}
