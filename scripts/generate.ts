// pnpm generate: write every generated file or section (docs/errors.md, each server README's reference, the
// root README's server table, docker-compose.yml). Tests fail when a committed copy differs from this.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "@roadnerd/registry";
import { expectedText, generatedFiles } from "./lib/generated.ts";

for (const g of await generatedFiles()) {
  const path = join(REPO_ROOT, g.path);
  const before = await readFile(path, "utf8").catch(() => "");
  const after = await expectedText(g);
  if (after === before) {
    console.log(`${g.path} is current`);
  } else {
    await writeFile(path, after);
    console.log(`updated ${g.path}`);
  }
}
