/**
 * The call slots' fair share (issue 18, F7): a caller alone takes every slot and the next call is E_BUSY as
 * before; a second caller asking at a full server takes the newest slot of the caller holding the most, until
 * both hold half; a call that gave its slot up is told so once, and its own release frees nothing twice.
 */
import { describe, expect, it } from "vitest";
import { DiagError } from "../../src/errors/errors.ts";
import { createCallSlots, LOCAL_CALLER } from "../../src/runtime/call-slots.ts";

const busy = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err instanceof DiagError ? err.code : "other";
  }
  return "served";
};

describe("call slots shared between callers", () => {
  it("one caller alone fills every slot; the next call is E_BUSY, and nobody is preempted", () => {
    const preempted: number[] = [];
    const slots = createCallSlots(4);
    for (let i = 0; i < 4; i++) slots.take("t", "uid:0", () => preempted.push(i));
    expect(busy(() => slots.take("t", "uid:0", () => {}))).toBe("E_BUSY");
    expect(busy(() => slots.check("t", "uid:0"))).toBe("E_BUSY");
    expect(slots.active).toBe(4);
    expect(preempted).toEqual([]);
  });

  it("a second caller takes the hog's newest slots until both hold half; then each is E_BUSY", () => {
    const preempted: number[] = [];
    const slots = createCallSlots(4);
    for (let i = 0; i < 4; i++) slots.take("t", "uid:0", () => preempted.push(i));
    expect(busy(() => slots.check("t", "uid:65534"))).toBe("served");
    const first = slots.take("t", "uid:65534", () => preempted.push(100));
    expect(preempted).toEqual([3]);
    // The hog asks again: it already holds more than the other caller, so it is refused.
    expect(busy(() => slots.take("t", "uid:0", () => {}))).toBe("E_BUSY");
    slots.take("t", "uid:65534", () => preempted.push(101));
    expect(preempted).toEqual([3, 2]);
    expect([slots.heldBy("uid:0"), slots.heldBy("uid:65534")]).toEqual([2, 2]);
    expect(busy(() => slots.take("t", "uid:65534", () => {}))).toBe("E_BUSY");
    expect(slots.active).toBe(4);
    // A release frees a slot once; the hog gets it back while nobody else asks.
    first();
    first();
    expect(slots.active).toBe(3);
    slots.take("t", "uid:0", () => {});
    expect(slots.heldBy("uid:0")).toBe(3);
  });

  it("a preempted call's release frees nothing; calls without onPreempt are never taken", () => {
    const slots = createCallSlots(2);
    const releases = [slots.take("t", "uid:0", () => {}), slots.take("t", "uid:0")];
    // The only preemptible call goes, though the other one is newer.
    slots.take("t", "uid:1");
    releases[0]?.();
    expect(slots.active).toBe(2);
    expect(slots.heldBy("uid:0")).toBe(1);
    // Probes and in-process calls (no onPreempt, no caller) keep their slots.
    const plain = createCallSlots(2);
    plain.take("t");
    plain.take("t");
    expect(busy(() => plain.take("t", "uid:1"))).toBe("E_BUSY");
    expect(plain.heldBy(LOCAL_CALLER)).toBe(2);
  });
});
