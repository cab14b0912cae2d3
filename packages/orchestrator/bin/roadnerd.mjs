#!/usr/bin/env node
// roadnerd: the file pnpm links as the bin at install time, before anything is built; the CLI itself is the
// esbuild bundle in dist/ (pnpm build).
import { existsSync } from "node:fs";

const cli = new URL("../dist/main.js", import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write("roadnerd is not built yet: run `pnpm build` in the repository first\n");
  process.exit(2);
}
await import(cli.href);
