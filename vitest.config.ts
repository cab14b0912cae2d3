import { defineConfig } from "vitest/config";

// Two cores in CI: keep parallelism modest. Tests that build network namespaces use unique names, so
// files may run side by side. Every run is sealed (test/setup/sealed.ts).
// The timeouts only catch a hung test: no assertion rests on them, and on a loaded machine a cold Chromium or a
// booted systemd takes many times what it takes alone, so they are generous.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "packages/*/test/**/*.test.ts", "servers/*/test/**/*.test.ts"],
    globalSetup: ["test/setup/sealed.ts"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default"],
  },
});
