/**
 * @roadnerd/conventions/memory — a long-lived process's memory (process/memory.ts): the young generation held
 * at YOUNG_CAP_BYTES at most, and a full GC when quiet. Its own entry because a process calls it before anything
 * else loads (the roadnerd CLI's first line): it imports nothing but Node's own modules.
 */
export { holdYoungGeneration, QUIET_CHECK_MS, trimAfterQuiet, YOUNG_CAP_BYTES } from "./process/memory.ts";
