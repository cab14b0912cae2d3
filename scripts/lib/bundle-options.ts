/**
 * How every bundle is built (scripts/build.ts), and the bench's bare fastify+zod baseline with it
 * (scripts/bench/bare-bundle.ts), so the baseline is built exactly the same way as the servers.
 */
import type { BuildOptions } from "esbuild";
import { builtinsByRequire } from "./builtins-by-require.ts";

export const BUNDLE_OPTIONS = {
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minifySyntax: true,
  legalComments: "none",
  // CommonJS dependencies inside an ESM bundle still call require().
  banner: {
    js: 'import { createRequire as __rnCreateRequire } from "node:module";\nconst require = __rnCreateRequire(import.meta.url);',
  },
  logLevel: "warning",
  plugins: [builtinsByRequire],
} satisfies BuildOptions;

/**
 * A server's bundle (scripts/build.ts): one CommonJS file, which its launcher compiles with the V8 code cache
 * of a start (ADR 0062). Node takes a cache for a classic script made after it ran, not for an ES module; its
 * dynamic imports become require calls of the same file, so nothing is split.
 */
export const SERVER_BUNDLE_OPTIONS = {
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  minifySyntax: true,
  legalComments: "none",
  charset: "ascii",
  // Minified whole: every byte of the bundle is read, decoded and handed to V8 at each start, and on a machine
  // where fresh memory is dear that is a fifth of attach (4.1 -> 2.1 MB for network; ADR 0067). No keepNames
  // (its __name calls at start cost back half the gain): a stack names places in app.cjs, which
  // `node scripts/unminify-stack.mjs` maps back through the app.cjs.map beside it.
  minifyWhitespace: true,
  minifyIdentifiers: true,
  // Lines of at most ~200 characters: a crash prints its frame's whole source line to stderr (a minified line
  // was up to 287 KB of it), and a stack's line numbers say something again.
  lineLimit: 200,
  // import() of a package left out of the bundle (webcheck's playwright-core) becomes require() too: a vm.Script
  // (the launcher's) can import() only through an experimental loader that warns on stderr, in the JSON log.
  supported: { "dynamic-import": false },
  // No import.meta in CommonJS: code that looks for a file beside its ES module source (the kernel's native
  // module, ADR 0064) sees undefined, with no warning at each build.
  define: { "import.meta.url": "undefined" },
  logLevel: "warning",
  // No builtins-by-require here: a CommonJS bundle already takes node:http by require().
} satisfies BuildOptions;
