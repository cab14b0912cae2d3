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
