import { defineConfig } from "vitest/config";

// Two cores in CI: keep parallelism modest. Tests that build network namespaces use unique names, so
// files may run side by side. Every run is sealed (test/setup/sealed.ts).
// The timeouts only catch a hung test: no assertion rests on them, and on a loaded machine a cold Chromium or a
// booted systemd takes many times what it takes alone, so they are generous.
//
// Two worlds (scripts/test-worlds.mjs, docs/decisions/0029-test-worlds.md): a `*.links.test.ts` file adds an
// interface to the test's own namespace (a veth to a namespace it built), which a test that reads that
// namespace ("no interface is up") must never see, so `pnpm test` runs them after the rest, never beside it.
// ROADNERD_WORLD=bare runs the others, =links only those; unset runs whatever files are named.
const LINKS = "**/*.links.test.ts";
const include = ["test/**/*.test.ts", "packages/*/test/**/*.test.ts", "servers/*/test/**/*.test.ts"];
const world = process.env.ROADNERD_WORLD;

export default defineConfig({
  test: {
    include: world === "links" ? include.map((glob) => glob.replace("*.test.ts", "*.links.test.ts")) : include,
    exclude: ["**/node_modules/**", ...(world === "bare" ? [LINKS] : [])],
    globalSetup: ["test/setup/sealed.ts"],
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default"],
  },
});
