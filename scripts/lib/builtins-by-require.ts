/**
 * An esbuild plugin: `import … from "node:http"` (and https) in our sources becomes a module that takes the
 * builtin through require() and re-exports its plain values. For an ESM import Node builds the builtin's ESM
 * facade, which reads every export, getters included, and node:http's lazy WebSocket/CloseEvent/MessageEvent
 * getters load Node's bundled undici: ~50–120 ms at every start on 2 loaded cores, against ~6 ms for require
 * (ADR 0043). Fastify and the other CommonJS dependencies already require() it.
 */
import { createRequire } from "node:module";
import type { Plugin } from "esbuild";

const require = createRequire(import.meta.url);
const NAMESPACE = "builtin-by-require";

/** The builtin's own data properties (not its getters, which would load what they guard). */
function plainExports(id: string): string[] {
  const mod: object = require(id);
  return Object.entries(Object.getOwnPropertyDescriptors(mod))
    .filter(([name, d]) => "value" in d && /^[A-Za-z_$][\w$]*$/.test(name) && name !== "default")
    .map(([name]) => name);
}

export const builtinsByRequire: Plugin = {
  name: "builtins-by-require",
  setup(build) {
    build.onResolve({ filter: /^(node:)?https?$/ }, (args) =>
      args.kind === "import-statement" || args.kind === "dynamic-import"
        ? { path: args.path.startsWith("node:") ? args.path : `node:${args.path}`, namespace: NAMESPACE }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({
      loader: "js",
      contents: [
        'import { createRequire } from "node:module";',
        `const m = createRequire(import.meta.url)(${JSON.stringify(args.path)});`,
        "export default m;",
        ...plainExports(args.path).map((name) => `export const ${name} = m.${name};`),
      ].join("\n"),
    }));
  },
};
