/** The quiet trim (`up` and every standalone server): one full GC after a quiet spell or a growth, none while busy and flat, none again until there was work. */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  GROWN_BYTES,
  GROWTH_CHECK_MS,
  QUIET_BUSY,
  QUIET_CHECK_MS,
  QUIET_INTERVALS,
  trimWhenQuiet,
} from "../../src/process/memory.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("trimWhenQuiet", () => {
  it("collects once per quiet spell after QUIET_INTERVALS quiet samples", () => {
    vi.useFakeTimers();
    let share = 0.5;
    let collected = 0;
    const stop = trimWhenQuiet({ busy: () => share, rss: () => 100e6, collect: () => (collected += 1) });
    // Busy: never.
    vi.advanceTimersByTime(QUIET_CHECK_MS * 5);
    expect(collected).toBe(0);
    // Quiet: one interval short of a spell, then the spell.
    share = QUIET_BUSY / 2;
    vi.advanceTimersByTime(QUIET_CHECK_MS * (QUIET_INTERVALS - 1));
    expect(collected).toBe(0);
    vi.advanceTimersByTime(QUIET_CHECK_MS);
    expect(collected).toBe(1);
    // Still quiet: nothing more to give back.
    vi.advanceTimersByTime(QUIET_CHECK_MS * 10);
    expect(collected).toBe(1);
    // Work, then quiet again: once more.
    share = QUIET_BUSY;
    vi.advanceTimersByTime(QUIET_CHECK_MS);
    share = 0;
    vi.advanceTimersByTime(QUIET_CHECK_MS * QUIET_INTERVALS);
    expect(collected).toBe(2);
    stop();
    share = 1;
    vi.advanceTimersByTime(QUIET_CHECK_MS);
    share = 0;
    vi.advanceTimersByTime(QUIET_CHECK_MS * QUIET_INTERVALS * 2);
    expect(collected).toBe(2);
  });

  it("a quiet start trims what starting left behind, a second after it serves, once", () => {
    vi.useFakeTimers();
    let collected = 0;
    trimWhenQuiet({ busy: () => 0, rss: () => 100e6, collect: () => (collected += 1) })();
    expect(collected).toBe(0);
    const stop = trimWhenQuiet({ busy: () => 0, rss: () => 100e6, collect: () => (collected += 1) });
    vi.advanceTimersByTime(GROWTH_CHECK_MS - 1);
    expect(collected).toBe(0);
    vi.advanceTimersByTime(1);
    expect(collected).toBe(1);
    vi.advanceTimersByTime(QUIET_CHECK_MS * QUIET_INTERVALS * 3);
    expect(collected).toBe(1);
    stop();
  });

  it("a start busy in its first second is trimmed at its first quiet second of the first sample, once", () => {
    vi.useFakeTimers();
    let collected = 0;
    let share = 0.5;
    const stop = trimWhenQuiet({ busy: () => share, rss: () => 100e6, collect: () => (collected += 1) });
    vi.advanceTimersByTime(GROWTH_CHECK_MS * 2);
    expect(collected).toBe(0);
    share = 0;
    vi.advanceTimersByTime(GROWTH_CHECK_MS);
    expect(collected).toBe(1);
    vi.advanceTimersByTime(QUIET_CHECK_MS * QUIET_INTERVALS * 3);
    expect(collected).toBe(1);
    stop();
  });

  it("a start busy for its whole first sample is trimmed after its first quiet spell instead", () => {
    vi.useFakeTimers();
    let collected = 0;
    let share = 0.5;
    const stop = trimWhenQuiet({ busy: () => share, rss: () => 100e6, collect: () => (collected += 1) });
    vi.advanceTimersByTime(QUIET_CHECK_MS);
    expect(collected).toBe(0);
    share = 0;
    vi.advanceTimersByTime(QUIET_CHECK_MS * QUIET_INTERVALS - 1);
    expect(collected).toBe(0);
    vi.advanceTimersByTime(1);
    expect(collected).toBe(1);
    stop();
  });

  it("a busy process that grew by GROWN_BYTES is collected, then measured again from its new floor", () => {
    vi.useFakeTimers();
    let rss = 100e6;
    let collected = 0;
    const stop = trimWhenQuiet({ busy: () => 1, rss: () => rss, collect: () => (collected += 1) });
    vi.advanceTimersByTime(QUIET_CHECK_MS);
    rss += GROWN_BYTES - 1;
    vi.advanceTimersByTime(QUIET_CHECK_MS * 3);
    expect(collected).toBe(0);
    rss += 1;
    vi.advanceTimersByTime(QUIET_CHECK_MS);
    expect(collected).toBe(1);
    // Still as large one sample later: that is the new floor, not another growth.
    vi.advanceTimersByTime(QUIET_CHECK_MS * 3);
    expect(collected).toBe(1);
    rss += GROWN_BYTES;
    vi.advanceTimersByTime(QUIET_CHECK_MS);
    expect(collected).toBe(2);
    stop();
  });

  it("a burst that grows the process between two busy samples is collected within a growth check", () => {
    vi.useFakeTimers();
    let rss = 100e6;
    let collected = 0;
    const stop = trimWhenQuiet({ busy: () => 1, rss: () => rss, collect: () => (collected += 1) });
    vi.advanceTimersByTime(GROWTH_CHECK_MS);
    rss += GROWN_BYTES;
    vi.advanceTimersByTime(GROWTH_CHECK_MS);
    expect(collected).toBe(1);
    expect(GROWTH_CHECK_MS * 2).toBeLessThan(QUIET_CHECK_MS);
    stop();
  });
});
