// vitest globalSetup: refuse to run unsealed, so a test that aims off the machine fails instead of leaving it.
// `pnpm test` runs vitest through scripts/sealed.mjs; ROADNERD_UNSEALED=1 (never under CI) skips the check.
// @ts-expect-error plain .mjs helper
import { isSealed } from "../../scripts/lib/sealed-check.mjs";

export default function checkSealed(): void {
  if (process.env.ROADNERD_UNSEALED === "1" && process.env.CI !== "true") return;
  if (!(isSealed() as boolean)) {
    throw new Error(
      "tests must run sealed in a private network namespace: use `pnpm test` (or `node scripts/sealed.mjs " +
        "node_modules/vitest/vitest.mjs run <files>`); see the README",
    );
  }
}
