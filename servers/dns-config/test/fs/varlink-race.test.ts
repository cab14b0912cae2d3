/**
 * Regression (stop 33's review, finding 2): resolved_status connected to resolved's varlink socket by its path
 * string after the walk, so `run` swapped for a symlink out of DNS_CONFIG_ROOT in between made root connect to a
 * socket outside the root (6 of 1,500 calls reported resolved running from a root-only listener there). The
 * connect now goes through an O_PATH descriptor of the socket the walk found: with a racer swapping `run`, the
 * socket outside is never reached.
 */
import type { ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESOLVED_VARLINK, resolvedRunning } from "../../src/resolved/running.ts";
import { leftoverSocket, startSwapRacer } from "../helpers/races.ts";

const CALLS = 400;
/** By count, not by clock: until both states of `run` were seen (a loaded machine may not schedule the racer). */
const MAX_CALLS = 50_000;
let base: string;
let root: string;
let racer: ChildProcess;
let outside: Server;
let reachedOutside = 0;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), "rn-varlink-race-"));
  root = join(base, "root");
  mkdirSync(join(root, "run.real/systemd/resolve"), { recursive: true });
  await leftoverSocket(join(root, `run.real${RESOLVED_VARLINK.slice(4)}`));
  // Outside the root: a socket that accepts, where only a path string followed by the kernel would lead.
  mkdirSync(join(base, "host-run/systemd/resolve"), { recursive: true });
  outside = createServer((s) => {
    reachedOutside += 1;
    s.destroy();
  });
  await new Promise<void>((ok) => outside.listen(join(base, `host-run${RESOLVED_VARLINK.slice(4)}`), ok));
  symlinkSync(join(base, "host-run"), join(root, "run.link"));
  racer = await startSwapRacer(root, "run");
});

afterAll(async () => {
  if (racer.exitCode === null) racer.kill("SIGKILL");
  await new Promise<void>((ok) => outside.close(() => ok()));
  rmSync(base, { recursive: true, force: true });
});

describe("resolved's varlink socket while /run is swapped for a symlink out of the root", () => {
  it(`never connects to the socket outside in ${CALLS} calls or more`, async () => {
    let leftOver = 0;
    let elsewhere = 0;
    let i = 0;
    for (; i < MAX_CALLS && !(i >= CALLS && leftOver > 0 && elsewhere > 0) && racer.exitCode === null; i++) {
      const r = await resolvedRunning(root, 50);
      expect(r.evidence).not.toContain("accepts connections");
      if (r.evidence.includes("left over")) leftOver += 1;
      else elsewhere += 1;
      if (i % 32 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(reachedOutside, `${reachedOutside} connections reached the socket outside the root`).toBe(0);
    expect(leftOver).toBeGreaterThan(0);
    expect(elsewhere).toBeGreaterThan(0);
  });
});
