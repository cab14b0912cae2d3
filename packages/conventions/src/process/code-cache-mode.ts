/**
 * `ROADNERD_CODE_CACHE` (ADR 0062), read by a server's launcher (process/launch-bundle.ts) and by runMain, which
 * sets no V8 flag in a start that writes the cache. Imports nothing: the launcher is bundled alone.
 * Unset, a cache that is there is used; `off` ignores it (the bench's cold start); `write` also writes the cache
 * when the process exits (`pnpm build` does, after a start answered); `report` says on stderr whether the
 * cache was used (the tests).
 */
export type CodeCacheMode = "use" | "off" | "write" | "report";

export function codeCacheMode(env: NodeJS.ProcessEnv = process.env): CodeCacheMode {
  const value = env.ROADNERD_CODE_CACHE;
  return value === "off" || value === "write" || value === "report" ? value : "use";
}
