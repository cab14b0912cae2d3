/**
 * @roadnerd/conventions/memory — a long-lived process's memory (process/memory.ts): the young generation capped
 * at 8 MiB, and a full GC when quiet (QUIET_CHECK_MS: how soon after a start its first one may come). Its own
 * entry because a process calls it before anything else loads (the roadnerd CLI's first line): it imports
 * nothing but Node's own modules.
 */
export { holdYoungGeneration, QUIET_CHECK_MS, trimAfterQuiet } from "./process/memory.ts";
