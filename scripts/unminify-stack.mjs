#!/usr/bin/env node
// A server's bundle is minified (ADR 0067), so a stack in its log names places like `at Xe (/…/dist/app.cjs:4287:144)`
// (absolute paths, as Node prints them).
// This maps each such place back to the TypeScript source through the map the build wrote beside the bundle:
//   node scripts/unminify-stack.mjs < stack.txt                 a stack as text (e.g. `jq -r .err.stack`)
//   node scripts/unminify-stack.mjs log.jsonl                   a JSON log: each line with an err.stack, mapped
//   node scripts/unminify-stack.mjs --from <checkout> log.jsonl a stack from an image or an npm install (no maps
//        there): `<checkout>/servers/<name>/dist/app.cjs.map`, from `pnpm build` of the same commit
// Reads nothing but regular files named app.cjs.map of at most 64 MiB; prints the input with places mapped.
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { dirname, join, relative, resolve } from "node:path";

const MAP_BYTES_AT_MOST = 64 * 1024 * 1024;
const NEEDLE = "/app.cjs:";

function usage(problem) {
  process.stderr.write(`${problem}\nusage: node scripts/unminify-stack.mjs [--from <checkout>] [file]\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
let from;
const fromAt = args.indexOf("--from");
if (fromAt !== -1) {
  from = args[fromAt + 1];
  if (!from) usage("--from needs a checkout built at the stack's commit");
  args.splice(fromAt, 2);
}
if (args.includes("--help") || args.includes("-h")) {
  process.stdout.write(
    "usage: node scripts/unminify-stack.mjs [--from <checkout>] [file]  (a stack on stdin, or a JSON log)\n",
  );
  process.exit(0);
}
if (args.length > 1 || args[0]?.startsWith("-")) usage(`unknown arguments: ${args.join(" ")}`);

/** The map's text, or undefined: a FIFO, a device or a huge file named app.cjs.map is not read. */
function readMap(file) {
  let fd;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAP_BYTES_AT_MOST) return undefined;
    return readFileSync(fd, "utf8");
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

const maps = new Map();
const unmapped = new Set();
/** The map for a bundle a frame names: beside it, or (--from) the same server's in the given checkout. */
function mapFor(bundle) {
  if (!maps.has(bundle)) {
    const server = /\/servers\/([a-z][a-z0-9-]*)\/dist\/app\.cjs$/.exec(bundle)?.[1];
    const file = from && server ? join(from, "servers", server, "dist", "app.cjs.map") : `${bundle}.map`;
    let map;
    try {
      const text = readMap(file);
      map = text === undefined ? undefined : new SourceMap(JSON.parse(text));
    } catch {
      map = undefined;
    }
    if (!map) unmapped.add(file);
    maps.set(bundle, { map, base: dirname(file) });
  }
  return maps.get(bundle);
}

/** One place, `<bundle>:<line>:<column>`, as its source's; undefined when the map does not cover it. */
function original(bundle, line, col) {
  const { map, base } = mapFor(bundle);
  if (!map) return undefined;
  // A place past the bundle's end maps to the last entry: only a mapping on the very line asked counts.
  if (map.findEntry(line - 1, col - 1)?.generatedLine !== line - 1) return undefined;
  const at = map.findOrigin(line, col);
  if (!at?.fileName) return undefined;
  return `${relative(process.cwd(), resolve(base, at.fileName))}:${at.lineNumber}:${at.columnNumber}`;
}

/** A path longer than this is not a place a stack names (and the look back for its start stays bounded). */
const PATH_AT_MOST = 4096;

/**
 * Every `/…/app.cjs:L:C` in a line, found by the needle, each looked back at over PATH_AT_MOST characters at
 * most (a crafted line cannot make this quadratic). The path runs back to the frame's `(`, so it may hold
 * spaces, or else to the blank before it.
 */
function unminify(text) {
  let out = "";
  let done = 0;
  let at = text.indexOf(NEEDLE);
  while (at !== -1) {
    const nums = /^(\d{1,9}):(\d{1,9})/.exec(text.slice(at + NEEDLE.length, at + NEEDLE.length + 20));
    const from = Math.max(done, at - PATH_AT_MOST);
    const before = text.slice(from, at);
    const open = before.lastIndexOf("(");
    const start =
      from +
      (open !== -1 && !before.includes(")", open)
        ? open + 1
        : Math.max(before.lastIndexOf(" "), before.lastIndexOf("\t")) + 1);
    const bundle = text.slice(start, at + "/app.cjs".length);
    const place = nums && bundle.startsWith("/") ? original(bundle, Number(nums[1]), Number(nums[2])) : undefined;
    const end = at + NEEDLE.length + (nums ? nums[0].length : 0);
    if (place) {
      out += `${text.slice(done, start)}${place} [${relative(process.cwd(), bundle)}:${nums[1]}:${nums[2]}]`;
      done = end;
    }
    at = text.indexOf(NEEDLE, end);
  }
  return out + text.slice(done);
}

/** No terminal control sequences from a log reach the screen (tabs and newlines stay). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it escapes.
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f\x9b]/g;
const printable = (s) => s.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);

function mapLine(line) {
  // A JSON log line (pino): when it carries a stack, what it was and when, then the stack mapped.
  if (line.startsWith("{")) {
    try {
      const entry = JSON.parse(line);
      if (typeof entry?.err?.stack === "string") {
        const what = [entry.time, entry.name, entry.msg, entry.tool, entry.reqId].filter((x) => typeof x === "string");
        return `${what.join(" ")}\n${unminify(entry.err.stack)}`;
      }
    } catch {}
  }
  return unminify(line);
}

let input;
try {
  input = args[0] ? readFileSync(args[0], "utf8") : readFileSync(0, "utf8");
} catch (err) {
  usage(`cannot read ${args[0] ?? "stdin"}: ${err.code ?? err.message}`);
}
process.stdout.write(printable(input.split("\n").map(mapLine).join("\n")));
// Where no map was read, once for each of the first few (a crafted log may name thousands).
for (const file of [...unmapped].slice(0, 3)) {
  const shown = file.length > 200 ? `…${file.slice(-200)}` : file;
  const hint = from ? "" : " (a stack from an image or an npm install: --from <checkout built at its commit>)";
  process.stderr.write(`no map read at ${printable(shown)}${hint}\n`);
}
