/**
 * A booted systemd with the test units and the built service server running inside it (its PID and mount
 * namespaces, the caller's network namespace), for the live tests. `stop()` tears both down.
 */
import { createClient } from "@roadnerd/client";
import { type BootedSystemd, bootSystemd, type SpawnedServer } from "@roadnerd/testkit";
import { TEST_UNITS } from "./test-units.ts";

export interface BootedService {
  harness: BootedSystemd;
  server: SpawnedServer;
  /** When the boot began: every boot-time timestamp is at or after it. */
  bootedAfter: string;
  stop(): Promise<void>;
}

export async function bootService(): Promise<BootedService> {
  const bootedAfter = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace(".000Z", "Z");
  const harness = await bootSystemd({ units: TEST_UNITS });
  try {
    // The logger is a oneshot: its lines are in the journal once it has exited, which the boot waited for.
    const server = await harness.spawnServer("service", { env: { LOG_LEVEL: "warn" } });
    return { harness, server, bootedAfter, stop: () => harness.stop() };
  } catch (err) {
    await harness.stop();
    throw err;
  }
}

export { createClient };
