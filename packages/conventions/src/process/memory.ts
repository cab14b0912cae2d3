/**
 * Memory of a long-lived process: the roadnerd process, which under `up` holds every server (ADR 0037), and each
 * standalone server (runMain: `node servers/<x>/dist/main.js`, the images; ADR 0041). Most of what they held
 * after calls was V8's young generation, not live objects: on a machine with several GiB, V8 doubles each
 * semi-space (up to 32 MiB) whenever enough survives a scavenge, and gives no page back while the process is
 * idle, since no GC runs then. So the young generation grows to YOUNG_CAP_BYTES and no further, and once the
 * process has been quiet for a while one full GC returns what the calls left behind. Node has no API for
 * either: both are V8 flags set at run time, once the process serves (ADR 0062): Node compiles every builtin
 * loaded after a V8 flag changed from source instead of from its embedded code cache (V8 checks the flags), 3×
 * the time, so a start that set them first paid ~20 ms. Imports nothing but Node's own modules.
 */
import { PerformanceObserver, performance } from "node:perf_hooks";
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** How often the event loop's busy share is sampled. */
export const QUIET_CHECK_MS = 5_000;
/**
 * How often the resident size is read: a quiet machine serves a thousand calls in a second or two, and
 * between two 5 s samples the old generation grew by 110 MiB before V8 collected it (`pnpm bench` section 6).
 */
export const GROWTH_CHECK_MS = 1_000;
/** Samples in a row under QUIET_BUSY before a trim: quiet for 15–20 s. */
export const QUIET_INTERVALS = 3;
/** Share of an interval the event loop may be busy and still count as quiet (a page's polling, a timer). */
export const QUIET_BUSY = 0.01;
/**
 * Growth of the resident size since the last trim that makes one even while busy: with the young generation
 * held small, V8 keeps the pages that calls freed (256 KiB each) until a full GC, which a busy process with a
 * small old generation may not have for thousands of calls (ADR 0037).
 */
export const GROWN_BYTES = 40 * 1024 * 1024;

export interface TrimDeps {
  /** The event loop's busy share since the previous sample (0–1). */
  busy: () => number;
  /** The resident size, in bytes. */
  rss: () => number;
  /** One full GC. */
  collect: () => void;
}

/**
 * Collects once at the first quiet GROWTH_CHECK_MS of the first QUIET_CHECK_MS after it starts; then samples the busy share every
 * QUIET_CHECK_MS and collects once after QUIET_INTERVALS quiet samples (then not
 * again until the process was busy: an idle process is not collected over and over); reads the resident size
 * every GROWTH_CHECK_MS and collects whenever it grew by GROWN_BYTES since the read after the last collection.
 * Returns the stop function.
 */
export function trimWhenQuiet(deps: TrimDeps): () => void {
  let quiet = 0;
  // The start's own garbage counts as work done: the first quiet spell trims it too.
  let worked = true;
  // What the process holds after a collection (read one sample later, when freed pages have gone back).
  let floor: number | undefined;
  const collect = () => {
    deps.collect();
    floor = undefined;
  };
  const ticksPerSample = Math.max(1, Math.round(QUIET_CHECK_MS / GROWTH_CHECK_MS));
  let tick = 0;
  /** The start's own garbage is still there: no collection yet. */
  let startLeft = true;
  const timer = setInterval(() => {
    const rss = deps.rss();
    if (floor === undefined || rss < floor) floor = rss;
    if (rss - floor >= GROWN_BYTES) {
      worked = true;
      collect();
    }
    tick += 1;
    // The young generation is held only once the process serves (ADR 0062), so starting may have grown it: the
    // first quiet second of the first sample gives that back then, not only after a whole quiet spell (`up`'s
    // first second is often busy: its table, the page's first poll; its idle figure then varied by 20 MiB).
    if (startLeft && tick < ticksPerSample) {
      if (deps.busy() < QUIET_BUSY) {
        startLeft = false;
        worked = false;
        collect();
      }
      return;
    }
    startLeft = false;
    if (tick % ticksPerSample !== 0) return;
    if (deps.busy() >= QUIET_BUSY) {
      quiet = 0;
      worked = true;
      return;
    }
    quiet += 1;
    if (worked && quiet >= QUIET_INTERVALS) {
      worked = false;
      collect();
    }
  }, GROWTH_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** The event loop's busy share between calls, from Node's event-loop utilization. */
function busySampler(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const share = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    return share;
  };
}

/**
 * The young generation (V8's new space, both semi-spaces) a busy process may grow to: where a server's own start
 * leaves it on a 64-bit machine. Held at the 2 MiB a trim shrinks it to, a call that leaves ~90 KB of garbage
 * (resolved_status) paid a scavenge every 11 calls and 27–35 µs of GC pause a call; at this cap one every ~46
 * calls, 17 µs (stop 40, ADR 0071). Left to itself V8 doubles it up to 64 MiB.
 */
export const YOUNG_CAP_BYTES = 8 * 1024 * 1024;

/** V8's pages (256 KiB on 64-bit); a semi-space is a whole number of them, the young generation two semi-spaces. */
const YOUNG_STEP_BYTES = 2 * 256 * 1024;

/**
 * The growth factor that takes a young generation of `size` bytes (youngSize) towards `cap` without passing it:
 * V8 grows it by this integer factor (up to its own maximum) whenever enough has survived since the last growth.
 * 1 (no growth) at the cap, when a growth would pass it, or when the size is unknown. The size V8 reports is a
 * little short of whole pages (their headers), so it is taken up to whole pages first: 2 MiB read as 2,097,024
 * bytes must give 4, not 5.
 */
export function growthFactor(size: number, cap = YOUNG_CAP_BYTES): number {
  // Unknown (no space of that name in some V8): hold it where it is rather than let it grow to V8's maximum.
  if (size <= 0) return 1;
  const whole = Math.ceil(size / YOUNG_STEP_BYTES) * YOUNG_STEP_BYTES;
  const factor = Math.floor(cap / whole);
  return factor >= 2 ? factor : 1;
}

/**
 * The young generation's size as V8 sizes it: two semi-spaces of what the current one holds and may still take.
 * Not new_space's committed size, which V8 commits page by page as it allocates (past both semi-spaces on Node 24
 * between two scavenges, short of them on Node 26).
 */
export function youngSize(): number {
  const space = getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  return space ? 2 * (space.space_used_size + space.space_available_size) : 0;
}

/**
 * Once the process serves (see above): the young generation may grow to YOUNG_CAP_BYTES and no further. V8 reads
 * the growth factor each time it would grow it (`--max-semi-space-size` would say the cap directly, but V8 reads
 * that one only when the heap is made, before any of our code runs), so the factor is set again after every GC:
 * enough to reach the cap in one step while below it, after a trim shrank it or V8 did, and 1 once there, set only
 * when it changes. Node hands a `gc` performance entry to its observer on a later turn of the event loop, so the
 * cap holds between turns: one synchronous task that keeps megabytes alive through several scavenges (`up`'s
 * start, a huge result) can grow it past the cap with the factor of before, where it then stays until the next
 * trim shrinks it. Returns the stop function.
 */
export function holdYoungGeneration(): () => void {
  let factor = 0;
  const hold = () => {
    const want = growthFactor(youngSize());
    if (want === factor) return;
    setFlagsFromString(`--semi-space-growth-factor=${want}`);
    factor = want;
  };
  hold();
  // Holds nothing open: an idle process runs no GC, and an observer does not keep the event loop alive.
  const observer = new PerformanceObserver(hold);
  observer.observe({ entryTypes: ["gc"] });
  return () => observer.disconnect();
}

/**
 * A full GC after each quiet spell, and whenever the process grew by GROWN_BYTES (`up` in one process, a
 * standalone server), then `release` (the kernel's malloc_trim, where the native module is built). `gc` comes
 * from a context made after `--expose-gc` is set, so the main context's globals stay as they are. Returns the
 * stop function.
 */
export function trimAfterQuiet(options: { release?: () => unknown } = {}): () => void {
  setFlagsFromString("--expose-gc");
  // The context is made at the first collection, not here: 1–2 ms (6 under a profiler) that a start called right
  // after its listening line would spend before it answers its first request.
  let gc: ((options: { type: "major"; execution: "sync"; flavor: "last-resort" }) => void) | undefined;
  // "last-resort": a memory-reducing GC, which also gives the freed pages back to the system; a plain gc() shrank
  // the heap to 42 MiB while the process kept its 167 MiB resident.
  const collect = () => {
    gc ??= runInNewContext("gc");
    gc?.({ type: "major", execution: "sync", flavor: "last-resort" });
    // What the GC freed in malloc's arenas (V8's worker threads compile and mark there) stays with the process
    // until something trims them: the caller's native release (ADR 0069), passed in so this module stays free of
    // imports.
    options.release?.();
  };
  return trimWhenQuiet({ busy: busySampler(), rss: () => process.memoryUsage.rss(), collect });
}
