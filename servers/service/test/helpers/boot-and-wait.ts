/**
 * Run by harness.test.ts in a child vitest (helpers/boot-and-wait.config.ts): boot a harness, print systemd's
 * PID, then wait to be killed outright — the case no exit hook can clean up after.
 */
import { bootSystemd } from "@roadnerd/testkit";
import { it } from "vitest";

it("boots and waits to be SIGKILLed", async () => {
  const harness = await bootSystemd();
  console.log(`BOOTED ${harness.pid}`);
  await new Promise((r) => setTimeout(r, 30_000));
}, 60_000);
