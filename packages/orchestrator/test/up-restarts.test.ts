/** `up`'s supervision: a faulted server restarts after a backoff that doubles, and resets once it stays up. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { RESTART_FIRST_MS, RESTART_MAX_MS, Restarts, STABLE_MS } from "../src/up/restarts.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("Restarts", () => {
  it("restarts with a doubling backoff, says so, and shows each state", async () => {
    vi.useFakeTimers();
    let clock = 0;
    const starts: string[] = [];
    let failNext = 0;
    const said: string[] = [];
    const r = new Restarts(
      async (s) => {
        starts.push(s);
        if (failNext > 0) {
          failNext -= 1;
          throw new Error("port busy");
        }
        return `http://127.0.0.1:7${starts.length}`;
      },
      (line) => said.push(line),
      () => clock,
    );
    expect(await r.startAll(["a"])).toEqual(new Map([["a", { url: "http://127.0.0.1:71" }]]));
    r.faulted("a", "Error: boom");
    expect(r.status().a).toMatchObject({
      state: "restarting",
      retry_in_ms: RESTART_FIRST_MS,
      last_fault: "Error: boom",
    });
    failNext = 1;
    await vi.advanceTimersByTimeAsync(RESTART_FIRST_MS);
    // The restart failed: the next wait doubles.
    expect(r.status().a).toMatchObject({ state: "restarting", retry_in_ms: RESTART_FIRST_MS * 2 });
    await vi.advanceTimersByTimeAsync(RESTART_FIRST_MS * 2);
    expect(r.status().a).toMatchObject({ state: "up", restarts: 1 });
    expect(said.at(-1)).toMatch(/^a restarted \(1 so far\)/);
    // Up for less than STABLE_MS: the next fault waits longer still; after STABLE_MS it starts over.
    r.faulted("a", "again");
    expect(r.status().a?.retry_in_ms).toBe(RESTART_FIRST_MS * 4);
    await vi.advanceTimersByTimeAsync(RESTART_FIRST_MS * 4);
    clock += STABLE_MS;
    r.faulted("a", "later");
    expect(r.status().a?.retry_in_ms).toBe(RESTART_FIRST_MS);
    r.close();
  });

  it("never waits longer than RESTART_MAX_MS, and a server that never started is not restarted", async () => {
    vi.useFakeTimers();
    let calls = 0;
    const r = new Restarts(
      async (s) => {
        calls += 1;
        if (s === "c" && calls === 1) return "http://127.0.0.1:7001";
        throw new Error("no");
      },
      () => {},
    );
    await r.startAll(["c"]);
    r.faulted("c", "x");
    const waits: number[] = [];
    for (let i = 0; i < 12; i += 1) {
      const wait = r.status().c?.retry_in_ms ?? 0;
      waits.push(wait);
      await vi.advanceTimersByTimeAsync(wait);
    }
    expect(Math.max(...waits)).toBe(RESTART_MAX_MS);
    expect(waits.slice(0, 3)).toEqual([RESTART_FIRST_MS, RESTART_FIRST_MS * 2, RESTART_FIRST_MS * 4]);
    const never = await r.startAll(["b"]);
    expect(never.get("b")).toEqual({ reason: "no" });
    r.faulted("b", "x");
    expect(r.status().b).toMatchObject({ state: "failed" });
    r.close();
  });
});
