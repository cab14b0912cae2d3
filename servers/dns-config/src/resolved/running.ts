/**
 * Is systemd-resolved running, known without privileges or binaries: its varlink socket
 * (/run/systemd/resolve/io.systemd.Resolve, created by every resolved since 246) accepts a connection only
 * while resolved runs; its /run files stay after it stops (RuntimeDirectoryPreserve=yes), so they only say it ran.
 */
import { closeSync } from "node:fs";
import { connect } from "node:net";
import { fdPath } from "@roadnerd/conventions";
import { holdSocketInRoot } from "../fs/read-bounded.ts";
import { resolveInRoot } from "../fs/root-path.ts";

export const RESOLVED_RUN_DIR = "/run/systemd/resolve";
export const RESOLVED_VARLINK = `${RESOLVED_RUN_DIR}/io.systemd.Resolve`;
export const RESOLVED_BINARIES = ["/usr/lib/systemd/systemd-resolved", "/lib/systemd/systemd-resolved"];
/** A connect to a local socket answers at once; this bounds a wedged one. */
const CONNECT_WAIT_MS = 250;

export interface Running {
  running: boolean;
  /** What decided it, in words. */
  evidence: string;
  installed: boolean;
  /** The daemon's binary found in the root, if any. */
  binary: string | null;
}

function tryConnect(path: string, waitMs: number): Promise<"accepts" | string> {
  return new Promise((resolve) => {
    const sock = connect({ path });
    const done = (v: string) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done("ETIMEDOUT"), waitMs);
    sock.once("connect", () => done("accepts"));
    sock.once("error", (err: NodeJS.ErrnoException) => done(err.code ?? "error"));
  });
}

async function exists(root: string, path: string): Promise<boolean> {
  return !(await resolveInRoot(root, path)).problem;
}

export async function resolvedRunning(root: string, budgetMs = CONNECT_WAIT_MS): Promise<Running> {
  // Independent lookups, each a few lstat calls: in parallel.
  const [found, varlink] = await Promise.all([
    Promise.all(RESOLVED_BINARIES.map((b) => exists(root, b))),
    holdSocketInRoot(root, RESOLVED_VARLINK),
  ]);
  const binary = RESOLVED_BINARIES[found.indexOf(true)] ?? null;
  const installed = binary !== null;
  if (varlink !== undefined) {
    // Through the held descriptor: the socket the walk found, never one a rename put there since.
    let answer: string;
    try {
      answer = await tryConnect(fdPath(varlink), Math.max(1, Math.min(budgetMs, CONNECT_WAIT_MS)));
    } finally {
      closeSync(varlink);
    }
    if (answer === "accepts") {
      return { running: true, evidence: `${RESOLVED_VARLINK} accepts connections`, installed, binary };
    }
    if (answer === "ECONNREFUSED") {
      return { running: false, evidence: `${RESOLVED_VARLINK} is left over: nothing listens on it`, installed, binary };
    }
    // EACCES or a socket that never answers: fall back to what the files say.
  }
  if (await exists(root, `${RESOLVED_RUN_DIR}/stub-resolv.conf`)) {
    return {
      running: true,
      evidence: `${RESOLVED_RUN_DIR}/stub-resolv.conf is present but ${RESOLVED_VARLINK} could not confirm it`,
      installed,
      binary,
    };
  }
  if (await exists(root, RESOLVED_RUN_DIR)) {
    return { running: false, evidence: `${RESOLVED_RUN_DIR} holds no stub file or varlink socket`, installed, binary };
  }
  return {
    running: false,
    evidence: `no ${RESOLVED_RUN_DIR}: systemd-resolved has not run since boot`,
    installed,
    binary,
  };
}
