/**
 * A server's `dist/main.js` (ADR 0062): compiles the server's one CommonJS bundle (`dist/app.cjs`) with the V8
 * code cache `pnpm build` made after a start had answered, then runs it. Node's own compile cache
 * (`NODE_COMPILE_CACHE`) saves a module's cache as soon as it is compiled, before it runs, so it holds the
 * top-level code only: every function a start calls (Fastify's, zod's, ours) was parsed and compiled again at
 * each start. A cache made after a start holds them too. Imports nothing but Node's own modules: it is bundled
 * alone into `main.js`, the file every image, bin and client config starts.
 */
import { hash } from "node:crypto";
import {
  closeSync,
  constants as fsConstants,
  fstatSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from "node:fs";
import Module, { createRequire } from "node:module";
import { dirname } from "node:path";
import { constants, Script } from "node:vm";
import { codeCacheMode } from "./code-cache-mode.ts";

/**
 * `rejected`: V8 refused it (another Node, other V8 flags); `damaged`: its bytes are not what was written, or
 * it was made for another bundle.
 */
export type CodeCacheState = "accepted" | "rejected" | "damaged" | "absent" | "off";

const HEADER_BYTES = 8;

/** CommonJS's own wrapper: the bundle runs as a module's body (V8's coverage offsets count it: the tests). */
export const BUNDLE_WRAPPER = "(function (exports, require, module, __filename, __dirname) {";

/**
 * The file holds a 32-bit digest of the bundle it was made from and of the cache, then the cache. V8 checks a
 * cache's version, its flags and the source's length, not the source or its own bytes: a damaged cache aborts
 * the process (checked: 64 flipped bytes, SIGTRAP), and one made for another bundle of the same length would
 * run that bundle's code. The digest finds damage, not an attacker: whoever can write the cache can write the
 * bundle. SHA-1's first four bytes, not zlib's CRC-32: node:crypto is loaded at every start anyway (Fastify's),
 * node:zlib only for this (7 ms of a 2-core start, ADR 0067).
 */
const digest = (bytes: Buffer): number => hash("sha1", bytes, "buffer").readUInt32BE(0);

function sealed(source: Buffer, data: Buffer): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32BE(digest(source), 0);
  header.writeUInt32BE(digest(data), 4);
  return Buffer.concat([header, data]);
}

function unsealed(file: Buffer, source: Buffer): Buffer | undefined {
  if (file.length <= HEADER_BYTES || file.readUInt32BE(0) !== digest(source)) return undefined;
  const data = file.subarray(HEADER_BYTES);
  return file.readUInt32BE(4) === digest(data) ? data : undefined;
}

/** Where a bundle's cache is kept: beside it, one per Node version (V8 refuses another version's anyway). */
export function codeCachePath(bundle: string, version: string = process.version): string {
  return `${bundle}.${version}.v8cache`;
}

/**
 * A cache is a regular file of at most this (a server's is ~2 MiB): a FIFO, a device or a huge sparse file in its
 * place would hang the start or fill its memory.
 */
const CACHE_BYTES_AT_MOST = 64 * 1024 * 1024;

/** The cache file's bytes; undefined when there is none; an empty buffer when something else is in its place. */
function readCache(file: string): Buffer | undefined {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO put there would otherwise wait for a writer.
    fd = openSync(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  } catch {
    return undefined; // Not built with this Node, or never made: compiled from source, as without a cache.
  }
  try {
    const stat = fstatSync(fd);
    return stat.isFile() && stat.size <= CACHE_BYTES_AT_MOST ? readFileSync(fd) : Buffer.alloc(0);
  } catch {
    return Buffer.alloc(0);
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether `bundle`'s cache for this Node is there and was made from these very bytes (what a start would find
 * `accepted` or `rejected`, never `damaged` or `absent`): the build keeps such a cache rather than train again.
 */
export function codeCacheFits(bundle: string): boolean {
  const file = readCache(codeCachePath(bundle));
  if (!file?.length) return false;
  try {
    return unsealed(file, readFileSync(bundle)) !== undefined;
  } catch {
    return false;
  }
}

/** The bundle's bytes; a missing one (a partial copy, an interrupted build) is one line and exit 2, not a stack. */
function readBundle(bundle: string): Buffer {
  try {
    return readFileSync(bundle);
  } catch (err) {
    process.stderr.write(
      `cannot read ${bundle} (${(err as NodeJS.ErrnoException).code ?? "error"}): run \`pnpm build\`\n`,
    );
    process.exit(2);
  }
}

/** Compile and run `bundle` as the process's main CommonJS module. */
export function launchBundle(bundle: string, env: NodeJS.ProcessEnv = process.env): CodeCacheState {
  const mode = codeCacheMode(env);
  const cacheFile = codeCachePath(bundle);
  const file = mode === "off" ? undefined : readCache(cacheFile);
  const bytes = readBundle(bundle);
  const cachedData = file && unsealed(file, bytes);
  // The build keeps the bundle ASCII (scripts/build.ts), so this is a one-byte string, decoded at memcpy speed.
  const source = bytes.toString("utf8");
  const script = new Script(`${BUNDLE_WRAPPER}${source}\n})`, {
    filename: bundle,
    // A stack's columns on the first line are the bundle's own, not shifted by the wrapper, so its source map
    // finds them (scripts/unminify-stack.mjs).
    columnOffset: -BUNDLE_WRAPPER.length,
    ...(cachedData ? { cachedData } : {}),
    // The build turns import() into require() (bundle-options.ts); one left would resolve as from the bundle
    // (Node warns that this loader is experimental).
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const state: CodeCacheState =
    mode === "off"
      ? "off"
      : !file
        ? "absent"
        : !cachedData
          ? "damaged"
          : script.cachedDataRejected
            ? "rejected"
            : "accepted";
  if (mode === "report") process.stderr.write(`code cache: ${state}\n`);
  if (mode === "write") {
    // At exit the cache holds every function the start compiled, not just the top level.
    process.once("exit", () => {
      const temp = `${cacheFile}.${process.pid}`;
      try {
        writeFileSync(temp, sealed(bytes, script.createCachedData()));
        renameSync(temp, cacheFile);
      } catch (err) {
        // The build reads the exit status: a cache it asked for and did not get is a failure, said in one line.
        process.stderr.write(`code cache not written: ${(err as Error).message}\n`);
        process.exitCode = 1;
      }
    });
  }
  const mod = new Module(bundle);
  mod.filename = bundle;
  const wrapper = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: Module,
    filename: string,
    dirname: string,
  ) => void;
  wrapper.call(mod.exports, mod.exports, createRequire(bundle), mod, bundle, dirname(bundle));
  return state;
}
