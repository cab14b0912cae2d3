#!/usr/bin/env node
// A server's bundle is minified (ADR 0067), so a stack in its log names places like `at Xe (…/dist/app.cjs:1:2345)`.
// This maps every such place back through the source map the build wrote beside the bundle (app.cjs.map):
//   node scripts/unminify-stack.mjs < stack.txt            (or: … | jq -r .err.stack | node scripts/unminify-stack.mjs)
//   node scripts/unminify-stack.mjs log.jsonl               (a JSON log: each line's err.stack, mapped)
// Read-only: only the `<dir>/app.cjs.map` beside each bundle a frame names is read (no other file a log names).
import { existsSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { dirname, relative, resolve } from "node:path";

const maps = new Map();
function mapFor(bundle) {
  if (!maps.has(bundle)) {
    const file = `${bundle}.map`;
    let map;
    try {
      map = existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, "utf8"))) : undefined;
    } catch {
      map = undefined;
    }
    maps.set(bundle, map);
  }
  return maps.get(bundle);
}

/** `(…/app.cjs:L:C)` or a bare `…/app.cjs:L:C`: the original file, line and column, the minified place kept after. */
function unminify(text) {
  return text.replace(/(\(?)(\/[^\s():]*\/app\.cjs):(\d+):(\d+)(\)?)/g, (all, open, file, line, col, close) => {
    const map = mapFor(file);
    const at = map?.findOrigin(Number(line), Number(col));
    if (!at?.fileName) return all;
    const original = relative(process.cwd(), resolve(dirname(file), at.fileName));
    return `${open}${original}:${at.lineNumber}:${at.columnNumber} [${relative(process.cwd(), file)}:${line}:${col}]${close}`;
  });
}

function mapLine(line) {
  // A JSON log line (pino): its err.stack mapped, printed as text.
  if (line.startsWith("{")) {
    try {
      const entry = JSON.parse(line);
      if (typeof entry?.err?.stack === "string") return unminify(entry.err.stack);
    } catch {}
  }
  return unminify(line);
}

const [path] = process.argv.slice(2);
const input = path ? readFileSync(path, "utf8") : readFileSync(0, "utf8");
process.stdout.write(`${input.split("\n").map(mapLine).join("\n")}`);
