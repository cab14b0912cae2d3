/**
 * The world a server's examples and suites run in: servers/<name>/test/readme-world.ts when it has one (DNS
 * answers, a web page, the public defaults denied by name), all on loopback; none otherwise.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, type RegisteredServer } from "@roadnerd/registry";

export interface World {
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function worldFor(s: RegisteredServer): Promise<World | undefined> {
  if (!existsSync(join(REPO_ROOT, s.dir, "test/readme-world.ts"))) return undefined;
  const mod = (await import(`../../../servers/${s.name}/test/readme-world.ts`)) as {
    startReadmeWorld(): Promise<World>;
  };
  return mod.startReadmeWorld();
}
