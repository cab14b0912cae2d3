#!/usr/bin/env node
// The file pnpm links as this server's bin at install time, before anything is built; the server itself is
// the esbuild bundle in dist/ (pnpm build).
import { existsSync } from "node:fs";

const server = new URL("../dist/main.js", import.meta.url);
if (!existsSync(server)) {
  process.stderr.write("this server is not built yet: run `pnpm build` in the repository first\n");
  process.exit(2);
}
await import(server.href);
