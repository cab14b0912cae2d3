/**
 * A server declares itself once, in its package.json: `@roadnerd/<name>`, bin `roadnerd-<name>` (a committed
 * launcher of the bundle dist/main.js), a one-line description and `roadnerd.port`. defineServer, the registry,
 * the scripts and the generated files all read it through this one parser, so they cannot disagree.
 */
import { z } from "zod";

export const SERVER_NAME = /^[a-z][a-z0-9-]{1,30}$/;

const packageSchema = z.object({
  name: z.string().regex(/^@roadnerd\/[a-z][a-z0-9-]{1,30}$/, "package name must be @roadnerd/<server>"),
  version: z.string().min(1),
  description: z.string().min(1).max(160).describe("one line: what the server is for"),
  bin: z.record(z.string(), z.string()),
  roadnerd: z.object({
    port: z.number().int().min(1024).max(65535).describe("default port"),
    title: z.string().min(1).max(40).optional().describe("display name, e.g. NetworkDiag"),
    debian: z
      .array(z.string().regex(/^[a-z0-9][a-z0-9+.-]+$/))
      .default([])
      .describe("Debian packages its commands need at run time (the image installs them)"),
    compose: z.record(z.string(), z.unknown()).default({}).describe("extra docker-compose keys for its service"),
    runtime: z
      .array(z.string().regex(/^(@[a-z0-9-]+\/)?[a-z0-9][a-z0-9._-]*$/))
      .default([])
      .describe(
        "npm dependencies loaded from node_modules at run time, not bundled (they read files beside their code)",
      ),
  }),
});

export interface ServerIdentity {
  /** Short name: the tool id prefix and the bin suffix. */
  name: string;
  packageName: string;
  version: string;
  title: string;
  summary: string;
  defaultPort: number;
  /** roadnerd-<name> */
  bin: string;
  /** Debian packages its commands need at run time. */
  debian: readonly string[];
  /** Extra docker-compose keys for its service (volumes, pid…). */
  compose: Readonly<Record<string, unknown>>;
  /** npm dependencies left out of the bundle and loaded from node_modules (the image copies them). */
  runtime: readonly string[];
}

/** Throws with every problem named when a server's package.json does not declare it fully. */
export function parseServerPackage(pkg: unknown, where = "package.json"): ServerIdentity {
  const parsed = packageSchema.safeParse(pkg);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
    throw new Error(`${where}: not a RoadNerd server package: ${lines.join("; ")}`);
  }
  const p = parsed.data;
  const name = p.name.slice("@roadnerd/".length);
  const bin = `roadnerd-${name}`;
  // The bin is a committed launcher of dist/main.js: pnpm links bins at install time, before anything is built.
  const bins = Object.entries(p.bin);
  const binFile = `./bin/${bin}.mjs`;
  if (bins.length !== 1 || bins[0]?.[0] !== bin || bins[0]?.[1] !== binFile) {
    throw new Error(`${where}: bin must be exactly { "${bin}": "${binFile}" }`);
  }
  if (p.description.includes("\n")) throw new Error(`${where}: description must be one line`);
  return {
    name,
    packageName: p.name,
    version: p.version,
    title: p.roadnerd.title ?? name,
    summary: p.description,
    defaultPort: p.roadnerd.port,
    bin,
    debian: p.roadnerd.debian,
    compose: p.roadnerd.compose,
    runtime: p.roadnerd.runtime,
  };
}
