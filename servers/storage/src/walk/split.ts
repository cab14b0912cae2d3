/**
 * How one walk is split with the walker children (ADR 0059): the walk's stack stays in the server; a child
 * running low is sent a share of what waits (from the shallow end: the biggest subtrees), and when little
 * waits the busiest child is asked to hand back half of what it holds. Each child's link keeps the directories
 * it holds, by path from the root (a frame's identity in a walk), as its last flush said: what a child that
 * dies or stalls held is handed back to the walk, which walks it again.
 */
import { availableParallelism } from "node:os";
import { leaseWalkChild, WALK_CHILD, type WalkChildLease } from "./child.ts";
import type { ChildFrame, ToWalkChild, WalkChildFlush } from "./child-main.ts";

/** A child is sent more when it holds fewer directories than this: up to half of those waiting, at most BATCH. */
const CHILD_LOW = 16;
const CHILD_BATCH = 256;
const CORES = availableParallelism();

/** What the split needs of its walk. */
export interface SplitHost<F extends ChildFrame> {
  /** The walk's parameters, sent to each child taken. */
  job: Omit<Extract<ToWalkChild, { t: "walk" }>, "t" | "walk">;
  /** Directories waiting in the walk's stack, and the shallowest of them taken out. */
  pending(): number;
  takeHead(): F;
  /** A directory for the walk to walk (handed back, or held by a child that is gone). */
  push(frame: F): void;
  /** The walk's own frame for one a child names. */
  frameOf(frame: ChildFrame): F;
  /** The serving thread is in the middle of a directory. */
  midDirectory(): boolean;
  /** The answer is fixed: nothing more is counted. */
  stopped(): boolean;
  /** Count a flush's entries (merged whole: nothing of it was counted before). */
  count(flush: WalkChildFlush): void;
  /** Something changed: wake the walk's loop. */
  notify(): void;
}

interface Link<F> {
  lease: WalkChildLease;
  live: boolean;
  owned: Map<string, F>;
  pending: number;
  giveAsked: boolean;
  lastHeard: number;
}

export interface Split {
  /** Take children when due; feed them; ask for work back; fail a stalled one. Called after each slice. */
  tend(): void;
  /** Children taken for this walk (the lanes stand down while there are). */
  active(): boolean;
  /** The serving thread walks while a core is left for it (or it is in the middle of a directory). */
  walksHere(): boolean;
  /** Directories the children hold: the walk is done only when none. */
  held(): number;
  /** When the walk must look again even if nobody reports (a child's stall limit), or Infinity. */
  lookAt(): number;
  /** The walk is over: the children drop it. */
  release(): void;
}

export function createSplit<F extends ChildFrame>(host: SplitHost<F>): Split {
  const links: Link<F>[] = [];
  let tookWarm = false;
  let tookCold = false;
  const begun = performance.now();
  const liveLinks = () => links.reduce((k, l) => k + (l.live ? 1 : 0), 0);
  const walksHere = () => host.midDirectory() || liveLinks() < CORES;

  /** One flush, whole: what it says the child holds replaces what it held. */
  function onFlush(link: Link<F>, m: WalkChildFlush): void {
    if (host.stopped()) return;
    link.lastHeard = performance.now();
    link.live = true;
    link.giveAsked = false;
    link.pending = m.pending;
    for (const rel of m.done) link.owned.delete(rel);
    for (const f of m.owned) link.owned.set(f.rel, host.frameOf(f));
    for (const f of m.released) {
      link.owned.delete(f.rel);
      host.push(host.frameOf(f));
    }
    host.count(m);
    host.notify();
  }

  /** A child is gone (exited, failed to start, stalled): what it held is walked again, here or by another. */
  function onGone(link: Link<F>): void {
    const i = links.indexOf(link);
    if (i >= 0) links.splice(i, 1);
    if (host.stopped()) return;
    for (const frame of link.owned.values()) host.push(frame);
    link.owned.clear();
    host.notify();
  }

  /** Children for this walk, up to WALK_CHILD.count: those already running, or (not `warmOnly`) started. */
  function take(now: number, warmOnly: boolean): void {
    while (links.length < WALK_CHILD.count) {
      const link: Link<F> = {
        lease: undefined as unknown as WalkChildLease,
        live: false,
        owned: new Map(),
        pending: 0,
        giveAsked: false,
        lastHeard: now,
      };
      const lease = leaseWalkChild(
        (m) => onFlush(link, m),
        () => onGone(link),
        warmOnly,
      );
      if (!lease) break;
      link.lease = lease;
      links.push(link);
      lease.send({ t: "walk", walk: 0, ...host.job });
    }
  }

  function feed(): void {
    const here = walksHere();
    const hungry = links.filter((l) => l.pending < CHILD_LOW);
    for (const link of hungry) {
      const spare = host.pending() - (here && !host.midDirectory() ? 1 : 0);
      if (spare <= 0) break;
      const share = Math.min(CHILD_BATCH, Math.ceil(spare / (here ? 2 : hungry.length)));
      const frames: ChildFrame[] = [];
      while (frames.length < share) {
        const f = host.takeHead();
        frames.push({ path: f.path, rel: f.rel, depth: f.depth, dev: f.dev, ino: f.ino });
        link.owned.set(f.rel, f);
      }
      link.pending += frames.length;
      link.lease.send({ t: "frames", walk: 0, frames });
    }
    // Little left here: the busiest child hands back half of what it holds before anyone runs dry (a child
    // hears only between its slices, so asking once one is idle would leave it idle that long).
    if (host.pending() < CHILD_LOW) {
      const busiest = links.filter((l) => l.live && !l.giveAsked).sort((a, b) => b.pending - a.pending)[0];
      if (busiest && busiest.pending >= 2 * CHILD_LOW) {
        busiest.giveAsked = true;
        busiest.lease.send({ t: "give", walk: 0 });
      }
    }
  }

  return {
    tend() {
      const now = performance.now();
      if (host.pending() > 1 && !tookWarm) {
        tookWarm = true;
        take(now, true);
      }
      if (host.pending() > 1 && !tookCold && now - begun >= WALK_CHILD.afterMs) {
        tookCold = true;
        take(now, false);
      }
      for (const link of [...links]) {
        if (link.owned.size > 0 && now - link.lastHeard > WALK_CHILD.stallMs) link.lease.fail();
      }
      feed();
    },
    active: () => links.length > 0,
    walksHere,
    held: () => links.reduce((k, l) => k + l.owned.size, 0),
    lookAt: () =>
      Math.min(Infinity, ...links.filter((l) => l.owned.size > 0).map((l) => l.lastHeard + WALK_CHILD.stallMs + 1)),
    release() {
      for (const link of links) link.lease.release();
    },
  };
}
