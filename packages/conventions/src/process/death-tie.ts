/**
 * Every child dies with this process (issue 18, A10; ADR 0051). A SIGKILLed server runs no exit hook, and each
 * child has its own process group, so nothing else would end it: each command is started through
 * `setpriv --pdeathsig KILL --` (util-linux, essential in Debian 12), which sets PR_SET_PDEATHSIG and execs the
 * checked program in the same process (same pid, same group). The kernel then SIGKILLs the child when the THREAD
 * that forked it ends: the spawn helper process, which stays while it has runs
 * and itself dies with the thread that started it (exec-relay.ts), or that thread for a Node helper.
 * The wrapper gets the checked program name after `--` (no argument of the program can reach setpriv) and finds
 * it on the child's own PATH, as spawn would (argv[0] stays the bare name). Where setpriv is absent (an image
 * without it) or the program is not on that PATH (checked first, findOnPath), the program is spawned directly,
 * as before: a missing binary is still ENOENT.
 */
import { accessSync, statSync } from "node:fs";

/** Where setpriv lives on Debian (merged /usr or not). */
const SETPRIV_AT = ["/usr/bin/setpriv", "/bin/setpriv"];

let wrapper: string | null | undefined;

/** setpriv's options before the program: `signal` on the forking thread's death; `--`: nothing after is an option. */
const tieArgs = (signal: "KILL" | "TERM"): readonly string[] => ["--pdeathsig", signal, "--"];

/** SIGKILL: what every child gets. */
export const TIE_ARGS: readonly string[] = tieArgs("KILL");

/**
 * The wrapper (setpriv and its options), looked up once; undefined where setpriv is absent. SIGTERM instead of
 * SIGKILL is for the spawn helper, which then kills the process groups it runs (what its children started in
 * them too) before it ends; a SIGKILLed helper left those to live on (stop 36's review).
 */
export function deathTieWrapper(
  signal: "KILL" | "TERM" = "KILL",
): { file: string; args: readonly string[] } | undefined {
  if (wrapper === undefined)
    wrapper = SETPRIV_AT.find((p) => findOnPath(p, undefined, accessSync, statSync) !== undefined) ?? null;
  return wrapper === null ? undefined : { file: wrapper, args: signal === "KILL" ? TIE_ARGS : tieArgs(signal) };
}

/**
 * The file `binary` names on `path` (a PATH value), as execvp would find it, or undefined. Self-contained (its
 * helpers are parameters) so the spawn helper process gets it as source text (exec-relay.ts).
 */
export function findOnPath(
  binary: string,
  path: string | undefined,
  access: typeof accessSync,
  stat: typeof statSync,
): string | undefined {
  const isExec = (p: string) => {
    try {
      access(p, 1 /* X_OK */);
      return stat(p).isFile();
    } catch {
      return false;
    }
  };
  if (binary.includes("/")) return isExec(binary) ? binary : undefined;
  for (const dir of (path ?? "").split(":")) {
    if (dir === "") continue;
    const p = `${dir.replace(/\/+$/, "")}/${binary}`;
    if (isExec(p)) return p;
  }
  return undefined;
}
