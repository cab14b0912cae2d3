/**
 * The walker children's life (ADR 0059): started by the first walk that runs longer than WALK_CHILD.afterMs (a
 * small walk never pays for them), then used by any walk that outlasts its first slice; up to WALK_CHILD.count
 * of them, each lent to one walk at a time (a second walk at once gets what is free, maybe none, and walks
 * alone as before), each ended after WALK_CHILD.idleMs without a walk (~65 MiB RSS, ~20 MiB of it its own,
 * while alive), and dead with their server (spawnNodeChild: setpriv, its own
 * group, killed at exit; it also exits when the channel closes). A child that exits, fails to start or is
 * failed by its walk (stalled) is gone for that walk, which walks its part again; the next walk starts another.
 */
import { availableParallelism } from "node:os";
import { type NodeChild, spawnNodeChild } from "@roadnerd/conventions";
import { type ToWalkChild, type WalkChildFlush, walkChildMain } from "./child-main.ts";

/** Tunables, named in one place (tests set them). */
export const WALK_CHILD = {
  /** Off: every walk stays in the server (the path before ADR 0059). */
  enabled: true,
  /** Children one walk may use: one per core (the server then only hands out work), at most two. */
  count: Math.min(2, availableParallelism()),
  /**
   * A walk still going after its first slice takes the children already running; one still going after this
   * long starts the rest: a short walk never pays for a start, nor a message.
   */
  afterMs: 25,
  /** A child without a walk for this long is ended. */
  idleMs: 20_000,
  /** A child that holds directories and says nothing for this long is killed, and its part walked again. */
  stallMs: 5_000,
};

export interface WalkChildLease {
  send(message: ToWalkChild): void;
  /** Kill the child now (stalled): `onGone` follows at once. */
  fail(): void;
  /** Done with it: the child drops this walk and waits for the next. */
  release(): void;
}

interface Holder {
  walk: number;
  onFlush(flush: WalkChildFlush): void;
  onGone(): void;
}

interface Slot {
  proc: NodeChild;
  holder?: Holder | undefined;
  idleTimer?: NodeJS.Timeout | undefined;
}

const slots: Slot[] = [];
let walks = 0;

// Named in its own argv (`ps`, the tests): the minified bundle renamed walkChildMain (ADR 0067).
const source = () => `/* roadnerd storage walker: walkChildMain */ (${walkChildMain.toString()})()`;

function gone(slot: Slot): void {
  const i = slots.indexOf(slot);
  if (i < 0) return;
  slots.splice(i, 1);
  slot.proc.end();
  clearTimeout(slot.idleTimer);
  const h = slot.holder;
  slot.holder = undefined;
  h?.onGone();
}

function start(): Slot {
  const slot: Slot = { proc: spawnNodeChild(source()) };
  const { child } = slot.proc;
  child.on("message", (m: WalkChildFlush) => {
    if (slot.holder && m.walk === slot.holder.walk) slot.holder.onFlush(m);
  });
  child.once("exit", () => gone(slot));
  // A failed start (ENOENT, EAGAIN) or a send on a closed channel.
  child.on("error", () => gone(slot));
  slots.push(slot);
  return slot;
}

/** Keep this process alive for a child only while a walk uses it. */
function hold(p: NodeChild, on: boolean): void {
  const channel = p.child.channel as { ref?: () => void; unref?: () => void } | undefined;
  if (on) {
    p.child.ref();
    channel?.ref?.();
  } else {
    p.child.unref();
    channel?.unref?.();
  }
}

/**
 * A child for one walk, or undefined: off, or all lent to other walks right now, or (`warmOnly`) none running
 * and free. Otherwise one is started.
 */
export function leaseWalkChild(
  onFlush: Holder["onFlush"],
  onGone: Holder["onGone"],
  warmOnly = false,
): WalkChildLease | undefined {
  if (!WALK_CHILD.enabled) return undefined;
  const slot = slots.find((s) => !s.holder) ?? (!warmOnly && slots.length < WALK_CHILD.count ? start() : undefined);
  if (!slot) return undefined;
  clearTimeout(slot.idleTimer);
  walks += 1;
  const mine: Holder = { walk: walks, onFlush, onGone };
  slot.holder = mine;
  hold(slot.proc, true);
  const send = (message: ToWalkChild) => {
    if (!slots.includes(slot)) return;
    try {
      slot.proc.child.send({ ...message, walk: mine.walk });
    } catch {
      gone(slot);
    }
  };
  return {
    send,
    fail: () => {
      if (slot.holder === mine) gone(slot);
    },
    release: () => {
      if (slot.holder !== mine) return;
      slot.holder = undefined;
      send({ t: "stop", walk: mine.walk });
      hold(slot.proc, false);
      slot.idleTimer = setTimeout(() => gone(slot), WALK_CHILD.idleMs);
      slot.idleTimer.unref();
    },
  };
}

/** End every child now (a test, or a server closing): a walk holding one walks its part again. */
export function endWalkChildren(): void {
  for (const slot of [...slots]) gone(slot);
}

/** The pids of the children running now: for tests and the bench. */
export function walkChildPids(): number[] {
  return slots.map((s) => s.proc.child.pid).filter((pid): pid is number => pid !== undefined);
}
