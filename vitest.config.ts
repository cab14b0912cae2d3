import { defineConfig } from "vitest/config";

// Two cores in CI: keep parallelism modest. Tests that build network namespaces use unique names, so
// files may run side by side. Every run is sealed (test/setup/sealed.ts).
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "packages/*/test/**/*.test.ts", "servers/*/test/**/*.test.ts"],
    globalSetup: ["test/setup/sealed.ts"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 30_000,
    reporters: ["default"],
  },
});
