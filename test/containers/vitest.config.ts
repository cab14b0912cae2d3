import { defineConfig } from "vitest/config";

// `pnpm test:containers` only: a real engine (podman + docker-compose), after `scripts/containers.sh images`.
// Its files end in .engine.ts so the main suite's include (*.test.ts) never picks them up.
export default defineConfig({
  test: {
    include: ["test/containers/**/*.engine.ts"],
    globalSetup: ["test/setup/sealed.ts"],
    pool: "forks",
    maxWorkers: 1,
    testTimeout: 120_000,
    hookTimeout: 600_000,
    reporters: ["default"],
  },
});
