/** The child vitest of harness.test.ts: only boot-and-wait.ts, in one fork (the parent runs sealed). */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: { include: ["servers/service/test/helpers/boot-and-wait.ts"], pool: "forks", maxWorkers: 1 },
});
