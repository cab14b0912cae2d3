// `pnpm record-results`: the recorder runs under vitest, so the worlds' helpers load as the tests load them.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: { include: ["scripts/record-results.ts"], pool: "forks", maxWorkers: 1, hookTimeout: 120_000 },
});
