/**
 * Issue 17 target 2, ADR 0057: would a V8 startup snapshot (`node --build-snapshot`, then `node --snapshot-blob`)
 * make a server attach faster? Builds, for one server, a single CommonJS bundle of its definition and the kernel's
 * HTTP start (the lazy host-http and http-app modules evaluated at build time, so they are in the heap), writes a
 * blob with the Node running this script, and times spawn → /healthz answered in interleaved rounds (order
 * rotating) for: the bare fastify+zod bundle (warm compile cache), the server's built dist/main.js (warm compile
 * cache), the server from the blob and from a slim blob (LAZY_PACKAGES left out); with each process's CPU until
 * that answer (utime + stime) and its USS then. Also `--help` (deserialize or load, print, exit) against
 * `node -e 0`, and the blobs' sizes. Ratios within one run only (ADR 0057 has the figures).
 *   node scripts/sealed.mjs scripts/run-ts.mjs scripts/bench/snapshot-ab.ts [ROUNDS] [server]
 *   node scripts/with-node.mjs 26 scripts/sealed.mjs scripts/run-ts.mjs scripts/bench/snapshot-ab.ts 10 network
 * (`pnpm build` first: the server's dist/ is one side.)
 *
 * What a snapshot cannot hold, found here (Node 24.21 and 26.10): node:http, https, http2 and tls (their native
 * bindings keep handles V8 cannot serialize: the build aborts in CheckGlobalAndEternalHandles). So they are
 * replaced in this bundle by a stand-in that loads the real module on first use after deserializing; at build
 * time only http.STATUS_CODES is read (Fastify's reply.js), which gets a lazy view of the real object. And a
 * worker thread of a process started from a blob aborts the process when it loads node:net or child_process
 * (`Assertion failed: pipe_constructor_template_.IsEmpty()`): the kernel's spawn helper (ADR 0042) cannot run.
 * The `spawn` line of the output checks that on the running Node.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT, readRegistry } from "@roadnerd/registry";
import { build, type Plugin } from "esbuild";
import { SERVER_BUNDLE_OPTIONS } from "../lib/bundle-options.ts";
import { buildBareBundle } from "./bare-bundle.ts";
import { f1, loadavg, ms, pct, start } from "./lib.ts";

const [rounds = "8", serverName = "network"] = process.argv.slice(2);
const node = process.execPath;
const serverDir = join(REPO_ROOT, "servers", serverName);
const kernel = join(REPO_ROOT, "packages/conventions/src");
/** The server's `roadnerd.runtime` packages stay out of its bundle, as in `pnpm build` (webcheck's playwright-core). */
const runtimeExternal = readRegistry().find((s) => s.name === serverName)?.runtime ?? [];

/** Builtins whose bindings cannot be in a snapshot: a stand-in that loads the real one on first use after it. */
const lazyBuiltins: Plugin = {
  name: "lazy-builtins",
  setup(b) {
    b.onResolve({ filter: /^(node:)?(http|https|http2|tls|_http_\w+)$/ }, (a) => ({
      path: a.path.startsWith("node:") ? a.path : `node:${a.path}`,
      namespace: "lazy-builtin",
    }));
    b.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, (a) => ({
      loader: "js",
      contents: `
const { startupSnapshot } = require("node:v8");
const id = ${JSON.stringify(a.path)};
let real;
const load = () => (real ??= require(id));
// Read while building: a function becomes a forwarder, an object a lazy view; nothing else is expected.
function forwarder(k) {
  const f = function (...args) {
    return new.target ? Reflect.construct(load()[k], args, new.target) : load()[k].apply(this, args);
  };
  Object.defineProperty(f, Symbol.hasInstance, { value: (x) => x instanceof load()[k] });
  return f;
}
function view(k) {
  const t = () => load()[k];
  return new Proxy({}, {
    get: (_, p) => Reflect.get(t(), p),
    has: (_, p) => Reflect.has(t(), p),
    ownKeys: () => Reflect.ownKeys(t()),
    getOwnPropertyDescriptor: (_, p) => {
      const d = Reflect.getOwnPropertyDescriptor(t(), p);
      if (d) d.configurable = true;
      return d;
    },
  });
}
module.exports = new Proxy({}, {
  get(_, k) {
    if (real || !startupSnapshot.isBuildingSnapshot()) return load()[k];
    if (k === "__esModule") return undefined;
    if (k === "STATUS_CODES") return view(k);
    return forwarder(k);
  },
});
`,
    }));
  },
};

/**
 * Packages a server loads only on some routes (undici, prom-client, yaml, the MCP SDK): left out of the
 * slim blob, whose server would fail on those routes. It shows the floor a split design could reach (those parts
 * loaded after deserializing from files by `module.createRequire`, which works there; `import()` does not).
 */
const LAZY_PACKAGES = ["undici", "prom-client", "yaml", "@modelcontextprotocol/sdk", "@modelcontextprotocol/sdk/*"];

async function buildBlob(dir: string, slim: boolean): Promise<{ blob: string; bytes: number; ms: number }> {
  const name = slim ? "slim" : "snapshot";
  const bundle = join(dir, `${name}.cjs`);
  await build({
    stdin: {
      contents: [
        'import { startupSnapshot } from "node:v8";',
        'import { runMain } from "@roadnerd/conventions";',
        `import ${JSON.stringify(join(kernel, "http/host-http.ts"))};`,
        `import ${JSON.stringify(join(kernel, "http/http-app.ts"))};`,
        'import { server } from "./src/server.ts";',
        // Without a script, process.argv is [node, ...the arguments after --].
        "startupSnapshot.setDeserializeMainFunction(() => void runMain(server, process.argv.slice(1)));",
      ].join("\n"),
      resolveDir: serverDir,
      sourcefile: "snapshot-entry.ts",
      loader: "ts",
    },
    ...SERVER_BUNDLE_OPTIONS,
    outfile: bundle,
    logLevel: "error",
    plugins: [lazyBuiltins],
    external: [...runtimeExternal, ...(slim ? LAZY_PACKAGES : [])],
  });
  const blob = join(dir, `${name}.blob`);
  const t0 = process.hrtime.bigint();
  const made = spawnSync(node, ["--snapshot-blob", blob, "--build-snapshot", bundle], { encoding: "utf8" });
  const took = ms(t0);
  if (made.status !== 0) throw new Error(`--build-snapshot failed (${made.status}): ${made.stderr.slice(-2000)}`);
  return { blob, bytes: statSync(blob).size, ms: took };
}

function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** Private memory (USS), in MiB. */
function ussMiB(pid: number): number {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kib = [...rollup.matchAll(/^Private_\w+:\s+(\d+) kB/gm)].reduce((a, m) => a + Number(m[1]), 0);
  return kib / 1024;
}

async function attachOnce(
  args: string[],
  env: Record<string, string>,
): Promise<{ wall: number; cpu: number; uss: number }> {
  const t0 = process.hrtime.bigint();
  const p = await start(node, args, env);
  await (await fetch(`${p.url}/healthz`)).arrayBuffer();
  const wall = ms(t0);
  const cpu = cpuMs(p.pid);
  const uss = ussMiB(p.pid);
  p.kill();
  await new Promise((r) => p.child.once("exit", r));
  return { wall, cpu, uss };
}

/** A process that runs and exits (no server): wall time of spawnSync. */
function runOnce(args: string[], env: Record<string, string>): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(node, args, { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, stdio: "ignore" });
  if (r.status !== 0) throw new Error(`${args.join(" ")} exited ${r.status}`);
  return ms(t0);
}

/** Does a worker thread of a process started from a blob survive loading child_process? */
function spawnCheck(dir: string): string {
  const entry = join(dir, "worker-check.cjs");
  const blob = join(dir, "worker-check.blob");
  writeFileSync(
    entry,
    `require("node:v8").startupSnapshot.setDeserializeMainFunction(() => {
  const { Worker } = require("node:worker_threads");
  new Worker('process.getBuiltinModule("node:child_process"); require("node:worker_threads").parentPort.postMessage("ok")', { eval: true })
    .on("message", (m) => process.stdout.write(m));
});\n`,
  );
  spawnSync(node, ["--snapshot-blob", blob, "--build-snapshot", entry], { stdio: "ignore" });
  const r = spawnSync(node, ["--snapshot-blob", blob], { encoding: "utf8", timeout: 20_000 });
  if (r.stdout === "ok") return "a worker loads child_process: the spawn helper can run";
  const why = /Assertion failed: [^\n]*/.exec(r.stderr)?.[0] ?? `exit ${r.status} ${r.signal ?? ""}`;
  return `a worker loading child_process aborts the process (${why}): the spawn helper cannot run`;
}

const work = mkdtempSync(join(tmpdir(), "rn-snapshot-ab-"));
const bare = await buildBareBundle();
try {
  const full = await buildBlob(work, false);
  const slim = await buildBlob(work, true);
  const plain = join(serverDir, "dist/main.js");
  type Side = { label: string; args: (cache: string) => string[]; env: (cache: string) => Record<string, string> };
  const sides: Side[] = [
    { label: "bare fastify+zod bundle", args: () => [bare.main], env: (c) => ({ NODE_COMPILE_CACHE: c }) },
    { label: `${serverName} dist/main.js`, args: () => [plain], env: (c) => ({ NODE_COMPILE_CACHE: c }) },
    { label: `${serverName} from the blob`, args: () => ["--snapshot-blob", full.blob], env: () => ({}) },
    { label: `${serverName} from a slim blob`, args: () => ["--snapshot-blob", slim.blob], env: () => ({}) },
  ];
  const wall = sides.map(() => [] as number[]);
  const cpu = sides.map(() => [] as number[]);
  const uss = sides.map(() => [] as number[]);
  const help = sides.map(() => [] as number[]);
  const empty: number[] = [];
  for (let i = 0; i < Number(rounds); i++) {
    for (let k = 0; k < sides.length; k++) {
      const j = (i + k) % sides.length;
      const side = sides[j] as Side;
      const cache = mkdtempSync(join(tmpdir(), "rn-snapshot-ab-cache-"));
      try {
        // The first start fills the compile cache (where there is one); the second is the one timed.
        await attachOnce(side.args(cache), side.env(cache));
        const r = await attachOnce(side.args(cache), side.env(cache));
        wall[j]?.push(r.wall);
        cpu[j]?.push(r.cpu);
        uss[j]?.push(r.uss);
        if (j > 0) help[j]?.push(runOnce([...side.args(cache), "--", "--help"], side.env(cache)));
      } finally {
        rmSync(cache, { recursive: true, force: true });
      }
    }
    empty.push(runOnce(["-e", "0"], {}));
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const size = (b: { bytes: number; ms: number }) => `${f1(b.bytes / 2 ** 20)} MiB (built in ${f1(b.ms)} ms)`;
  console.log(`${node} ${process.version}: blob ${size(full)}, slim blob ${size(slim)}`);
  sides.forEach((s, j) => {
    const w = pct(wall[j] ?? [], 50);
    const c = mean(cpu[j] ?? []);
    const ratio = (x: number, base: number) => (x / base).toFixed(2);
    const vsBare = `${ratio(w, pct(wall[0] ?? [], 50))}× bare, CPU ${ratio(c, mean(cpu[0] ?? []))}×`;
    const vsPlain = j >= 2 ? `; ${ratio(w, pct(wall[1] ?? [], 50))}× dist, CPU ${ratio(c, mean(cpu[1] ?? []))}×` : "";
    const h = j > 0 ? `; --help p50 ${f1(pct(help[j] ?? [], 50))} ms` : "";
    const u = `USS ${f1(pct(uss[j] ?? [], 50))} MiB`;
    console.log(`${s.label.padEnd(30)} attach p50 ${f1(w)} ms, CPU ${f1(c)} ms (${vsBare}${vsPlain})${h}; ${u}`);
  });
  console.log(`node -e 0 p50 ${f1(pct(empty, 50))} ms`);
  console.log(`spawn: ${spawnCheck(work)}`);
  console.log(`${rounds} rounds, ${loadavg()}`);
} finally {
  bare.remove();
  rmSync(work, { recursive: true, force: true });
}
