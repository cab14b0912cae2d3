/**
 * Every file (or part of a file) made from code, in one place: `pnpm generate` writes them and
 * test/generated.test.ts fails when a committed copy differs. Docs, compose, the README's server table and
 * the registry's links to the servers are derived from the registry and the servers' own definitions, so they
 * cannot rot.
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, posix } from "node:path";
import { renderErrorTable, renderMetadataTable, renderServerReference } from "@roadnerd/conventions/internal";
import { loadServer, REPO_ROOT, type RegisteredServer, readRegistry } from "@roadnerd/registry";
import { build as esbuild } from "esbuild";
import { Document, isMap, isScalar } from "yaml";
import { renderClientConfigs } from "./client-configs.ts";
import { KUBERNETES_FILE, kubernetesFile } from "./kubernetes.ts";
import {
  REGISTRY_PACKAGE,
  ROOT_PACKAGE,
  registryPackage,
  rootPackage,
  SERVER_MODULES_FILE,
  serverModules,
} from "./registry-files.ts";

/**
 * COPY lines for `pnpm build`'s own scripts: its runner and every file under scripts/ that build.ts imports,
 * found by esbuild as the build itself finds them, so a new helper module cannot be left out of the image.
 */
async function buildScriptCopies(): Promise<string> {
  const { metafile } = await esbuild({
    absWorkingDir: REPO_ROOT,
    entryPoints: ["scripts/build.ts"],
    bundle: true,
    platform: "node",
    format: "esm",
    packages: "external",
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const files = ["scripts/run-ts.mjs", ...Object.keys(metafile.inputs).filter((f) => f.startsWith("scripts/"))];
  const byDir = new Map<string, string[]>();
  for (const f of [...new Set(files)].sort()) {
    const dir = `${posix.dirname(f)}/`;
    byDir.set(dir, [...(byDir.get(dir) ?? []), f]);
  }
  return [...byDir].map(([dir, fs]) => `COPY ${fs.join(" ")} ${dir}`).join("\n");
}

/** The pnpm the root package.json pins (packageManager): the image installs the same one. */
function pnpmVersion(): string {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { packageManager: string };
  return pkg.packageManager.replace(/^pnpm@/, "");
}

export const START = "<!-- generated:start -->";
export const END = "<!-- generated:end -->";
export const CLIENTS_START = "<!-- clients:start -->";
export const CLIENTS_END = "<!-- clients:end -->";

export interface Generated {
  /** Relative to the repository root. */
  path: string;
  /** The whole file, or (with markers) only what goes between them. */
  content: string;
  between?: [string, string];
}

export function replaceBetween(doc: string, [start, end]: [string, string], generated: string, path: string): string {
  const a = doc.indexOf(start);
  const b = doc.indexOf(end);
  if (a < 0 || b < a) throw new Error(`${path}: markers ${start} … ${end} missing`);
  return `${doc.slice(0, a + start.length)}\n${generated}\n${doc.slice(b)}`;
}

/** The root README's table of servers: every registered server. */
async function serverTable(servers: readonly RegisteredServer[]): Promise<string> {
  const rows = ["| server | port | what it answers | tools |", "| --- | --- | --- | --- |"];
  for (const s of servers) {
    const def = await loadServer(s.name);
    const tools = [...def.tools.map((t) => t.name), ...def.streams.map((st) => `/sse/${st.name}`)].join(", ");
    const title = s.title === s.name ? "" : ` (${s.title})`;
    rows.push(`| [\`${s.name}\`](${s.dir}/README.md)${title} | ${s.defaultPort} | ${s.summary} | ${tools} |`);
  }
  return rows.join("\n");
}

/** The port of the MCP gateway (`roadnerd mcp --http`): its image and compose service. */
export const GATEWAY_PORT = 7100;
/** The Node base every image starts from; the container test builds a stand-in of it (scripts/containers.sh). */
export const NODE_BASE = "node:24-bookworm-slim";
/** A server whose Debian packages are too large to copy piece by piece keeps a whole Debian (the browser). */
const FULL_DEBIAN = ["chromium"];

/** What the image of one server needs: the binaries its commands run, and whether it needs a whole Debian. */
interface ImageServer {
  s: RegisteredServer;
  binaries: string[];
  full: boolean;
}

async function imageServers(servers: readonly RegisteredServer[]): Promise<ImageServer[]> {
  const out: ImageServer[] = [];
  for (const s of servers) {
    const def = await loadServer(s.name);
    const binaries = [...new Set(def.commands.map((c) => c.binary))];
    out.push({ s, binaries, full: s.debian.some((p) => FULL_DEBIAN.includes(p)) });
  }
  return out;
}

/** The healthcheck both the image and compose run: node (in every image) fetching /healthz on loopback. */
const healthJs = (port: string) =>
  `fetch('http://127.0.0.1:'+${port}+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))`;

/** The images' user, node: the gateway's uid, which the root-run servers must also serve (ALLOWED_UIDS). */
const IMAGE_UID = "1000";

/**
 * What each server sees of the host in compose, least privilege each, the reason beside it (a comment in the
 * file). Every server runs as the image's user (node, uid 1000) unless it is listed here with `user: root`.
 */
const HOST_VIEW: Record<string, { why: string[]; extra: Record<string, unknown> }> = {
  ports: {
    why: [
      "ports: the host's PID namespace; root with SYS_PTRACE and DAC_READ_SEARCH to read every process's",
      "/proc/<pid>/fd (which socket is whose); the host's /etc/passwd and /etc/group to name their users.",
    ],
    extra: {
      pid: "host",
      user: "root",
      cap_add: ["SYS_PTRACE", "DAC_READ_SEARCH"],
      volumes: ["/etc/passwd:/etc/passwd:ro", "/etc/group:/etc/group:ro"],
    },
  },
  storage: {
    why: [
      "storage: the host's / read-only under /host; root with only DAC_READ_SEARCH, so directories of every user",
      "(and /var/lib, where container disk use lives) are counted, not skipped as unreadable.",
    ],
    extra: { user: "root", cap_add: ["DAC_READ_SEARCH"] },
  },
  "dns-config": {
    why: [
      "dns-config: the host's /etc, /run and /usr read-only under /host (resolv.conf, NetworkManager, resolved's",
      "socket and settings, and /usr for whether systemd-resolved is installed).",
    ],
    extra: { volumes: ["/etc:/host/etc:ro", "/run:/host/run:ro", "/usr:/host/usr:ro"] },
  },
  proxy: {
    why: [
      "proxy: the host's /etc read-only under /host (PROXY_ROOT): its environment, apt and profile proxy settings.",
    ],
    extra: { volumes: ["/etc:/host/etc:ro"], environment: { PROXY_ROOT: "/host" } },
  },
  service: {
    why: [
      "service: root without capabilities (root owns systemd's private socket, which systemctl uses as root, so no",
      "D-Bus; and the journal files) with the host's /run/systemd, journal and machine-id read-only; on a host",
      "without systemd it says systemd is not running. Its README: run it on the host for the host's full view.",
    ],
    extra: { user: "root" },
  },
};

/** The compose service of one server: its own image target, host network on loopback, locked down. */
function composeService(s: RegisteredServer): Record<string, unknown> {
  const view = HOST_VIEW[s.name]?.extra ?? {};
  const fromRegistry = s.compose as Record<string, unknown>;
  const volumes = [
    ...((fromRegistry.volumes as string[] | undefined) ?? []),
    ...((view.volumes as string[] | undefined) ?? []),
  ];
  return {
    build: { context: ".", target: s.name, args: { NODE_BASE: `\${NODE_BASE:-${NODE_BASE}}` } },
    image: `roadnerd-${s.name}`,
    network_mode: "host",
    // An init reaps the children (the browser's, commands'); with the host's PID namespace (ports) there is no
    // PID 1 to take (podman refuses it), and the server's only children are commands it waits for.
    init: view.pid !== "host" && fromRegistry.pid !== "host",
    environment: {
      HOST: "127.0.0.1",
      PORT: String(s.defaultPort),
      LOG_LEVEL: "info",
      // The gateway asks for it by its service name: a Host the DNS-rebinding guard must accept.
      ALLOWED_HOSTS: s.name,
      ...(fromRegistry.environment as Record<string, string> | undefined),
      ...(view.environment as Record<string, string> | undefined),
      // A root-run server serves only root and itself on loopback (docs/security.md): the gateway runs as node.
      ...(view.user === "root" ? { ALLOWED_UIDS: IMAGE_UID } : {}),
    },
    read_only: true,
    cap_drop: ["ALL"],
    security_opt: ["no-new-privileges:true"],
    restart: "unless-stopped",
    healthcheck: {
      test: ["CMD", "node", "-e", healthJs(`'${s.defaultPort}'`)],
      interval: "30s",
      timeout: "3s",
      retries: 3,
    },
    ...Object.fromEntries(Object.entries(fromRegistry).filter(([key]) => key !== "environment" && key !== "volumes")),
    ...Object.fromEntries(Object.entries(view).filter(([key]) => key !== "environment" && key !== "volumes")),
    ...(volumes.length ? { volumes: [...new Set(volumes)] } : {}),
  };
}

/**
 * The gateway: one MCP entry at 127.0.0.1:7100 for every server. On the host network there is no service DNS,
 * so each server's name is an extra /etc/hosts entry for 127.0.0.1 and the gateway reaches it by name.
 */
function gatewayService(servers: readonly RegisteredServer[]): Record<string, unknown> {
  const env: Record<string, string> = { LOG_LEVEL: "info" };
  for (const s of servers)
    env[`ROADNERD_SERVER_${s.name.toUpperCase().replace(/-/g, "_")}_URL`] = `http://${s.name}:${s.defaultPort}`;
  return {
    build: { context: ".", target: "gateway", args: { NODE_BASE: `\${NODE_BASE:-${NODE_BASE}}` } },
    image: "roadnerd-gateway",
    network_mode: "host",
    init: true,
    extra_hosts: servers.map((s) => `${s.name}:127.0.0.1`),
    environment: env,
    read_only: true,
    cap_drop: ["ALL"],
    security_opt: ["no-new-privileges:true"],
    restart: "unless-stopped",
    healthcheck: {
      test: ["CMD", "node", "-e", healthJs(`'${GATEWAY_PORT}'`)],
      interval: "30s",
      timeout: "3s",
      retries: 3,
    },
    depends_on: servers.map((s) => s.name),
  };
}

function composeFile(servers: readonly RegisteredServer[]): string {
  const services: Record<string, unknown> = {};
  for (const s of servers) services[s.name] = composeService(s);
  services.gateway = gatewayService(servers);
  const header = [
    "# Generated by `pnpm generate` from the server registry (servers/*/package.json); edit those, not this.",
    "#   docker compose up -d --build      every server and the MCP gateway at http://127.0.0.1:7100/mcp",
    "#   docker compose down               stops and removes them (nothing is kept: no volumes)",
    "# Every service shares the host's network namespace: a server must see the host's interfaces, routes and",
    "# resolver to diagnose them, and each binds only 127.0.0.1 (the same ports as `pnpm start`: run one or the",
    "# other). `init: true`: a small init reaps the browser's and commands' children, node is not PID 1 (not for",
    "# ports, which shares the host's PID namespace: there is no PID 1 to take).",
    "# Each image is one target of the Dockerfile; NODE_BASE (default node:24-bookworm-slim) is the Node base.",
    "# What each server sees of the host: least privilege each, the reason above its service; every other",
    "# service: read-only root, no capabilities, no new privileges, the image's user node. A server run as root",
    "# serves only root and itself on loopback: ALLOWED_UIDS lets the gateway (node, uid 1000) call it.",
    "# proxy and webcheck reach NOTHING until OUTBOUND_ALLOW lists their targets: set it (and AUTH_TOKEN, 16+",
    "# chars, to require a token) in a docker-compose.override.yml; proxy_env_status reports the container's",
    "# environment, so pass the proxy variables you want checked there too.",
  ].join("\n");
  const doc = new Document({ services });
  const map = doc.get("services");
  if (isMap(map))
    for (const pair of map.items)
      if (isScalar(pair.key)) {
        const why = HOST_VIEW[String(pair.key.value)]?.why;
        if (why) pair.key.commentBefore = why.map((line) => ` ${line}`).join("\n");
      }
  return `${header}\n${doc.toString({ lineWidth: 0 })}`;
}

/** The `roadnerd.runtime` packages each server loads from node_modules, copied with links resolved. */
function runtimeCopies(servers: readonly RegisteredServer[]): string {
  return servers
    .flatMap((s) =>
      s.runtime.map(
        (pkg) =>
          ` \\\n && mkdir -p /out/${s.dir}/node_modules && cp -rL ${s.dir}/node_modules/${pkg} /out/${s.dir}/node_modules/`,
      ),
    )
    .join("");
}

/** The lines every image ends with: where it runs from, its port, the healthcheck, what it runs. */
function imageTail(port: number, entrypoint: string[], cmd: string[] = []): string {
  const health = JSON.stringify(["node", "-e", healthJs(`(process.env.PORT||'${port}')`)]);
  return `WORKDIR /app
ENV HOST=127.0.0.1 PORT=${port} NODE_ENV=production
HEALTHCHECK --interval=30s --timeout=3s --retries=3 CMD ${health}
ENTRYPOINT ${JSON.stringify(entrypoint)}
${cmd.length ? `CMD ${JSON.stringify(cmd)}\n` : ""}`;
}

/** Runs as root in compose (HOST_VIEW); every other image runs as node. */
const userOf = (name: string) => (HOST_VIEW[name]?.extra.user === "root" ? "root" : "node");

/**
 * One Dockerfile, one target per server and one for the gateway. The `build` stage (pnpm install + build) runs
 * once for all of them; `slim` copies out of a Debian only what each needs (Node, the binaries its commands run,
 * their libraries); a server that needs a whole Debian (the browser) starts from the Node base instead.
 */
async function dockerfile(servers: readonly RegisteredServer[]): Promise<string> {
  const images = await imageServers(servers);
  const slimDebian = [...new Set(images.filter((i) => !i.full).flatMap((i) => i.s.debian))].sort();
  const slimBins = images
    .filter((i) => !i.full && i.binaries.length)
    .map((i) => ` \\\n && scripts/image-root.sh /bins/${i.s.name} ${i.binaries.join(" ")}`)
    .join("");
  const targets = images.map(({ s, binaries, full }) => {
    const user = userOf(s.name);
    const entry = ["node", s.entry];
    if (full) {
      const debian = [...new Set(s.debian)].sort();
      return `# ${s.name}: its Debian packages (${debian.join(", ")}) need a whole Debian: the Node base.
FROM \${NODE_BASE} AS ${s.name}
RUN apt-get update && apt-get install -y --no-install-recommends ${debian.join(" ")} && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/${s.dir} /app/${s.dir}
USER ${user}
${imageTail(s.defaultPort, entry)}`;
    }
    return `FROM scratch AS ${s.name}
COPY --from=slim /slim/ /
${binaries.length ? `COPY --from=slim /bins/${s.name}/ /\n` : ""}COPY --from=build /out/${s.dir} /app/${s.dir}
USER ${user}
${imageTail(s.defaultPort, entry)}`;
  });
  return `# Generated by \`pnpm generate\` from the server registry (servers/*/package.json); edit those, not this.
# One target per server and one for the MCP gateway; the build stage runs once for all of them.
#   docker build --target network -t roadnerd-network .
#   docker run --rm --network host roadnerd-network          (--stdio for MCP over stdin/stdout)
#   docker compose up -d --build                              every server and the gateway (docker-compose.yml)
# NODE_BASE: a Debian 12 with Node and npm, node:24-bookworm-slim unless given (--build-arg NODE_BASE=…).
ARG NODE_BASE=${NODE_BASE}

FROM \${NODE_BASE} AS build
WORKDIR /src
# A C compiler for the kernel's one native module (sock-diag.node, ADR 0064): the images run it, not gcc.
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \\
 && rm -rf /var/lib/apt/lists/*
RUN npm install -g pnpm@${pnpmVersion()}
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml tsconfig.base.json ./
COPY packages ./packages
COPY servers ./servers
# Only the build's own scripts, so an edit elsewhere in scripts/ keeps this stage's cache.
${await buildScriptCopies()}
# The bundles without their source maps; the gateway's layout is the registry's (each server's package.json).
# pnpm's store is a build cache: a rebuild downloads only what changed.
RUN --mount=type=cache,id=roadnerd-pnpm-store,target=/pnpm-store \\
    pnpm install --frozen-lockfile --store-dir /pnpm-store && pnpm build && find servers packages -name '*.map' -delete \\
 && for d in servers/*/; do mkdir -p "/out/$d" && cp -r "$d/dist" "/out/$d"; done \\
 && mkdir -p /gateway/packages/orchestrator && cp pnpm-workspace.yaml /gateway/ \\
 && cp -r packages/orchestrator/dist /gateway/packages/orchestrator/ \\
 && for d in servers/*/; do mkdir -p "/gateway/$d" && cp "$d/package.json" "/gateway/$d"; done${runtimeCopies(servers)}

# Node and the binaries each server runs, with their libraries, copied out of a Debian (scripts/image-root.sh).
FROM \${NODE_BASE} AS slim
RUN apt-get update && apt-get install -y --no-install-recommends binutils ${slimDebian.join(" ")} \\
 && rm -rf /var/lib/apt/lists/*
COPY scripts/image-root.sh scripts/
RUN scripts/image-root.sh /slim${slimBins}

${targets.join("\n")}
# gateway: one MCP entry (Streamable HTTP) for every server, reaching them at ROADNERD_SERVER_<NAME>_URL.
FROM scratch AS gateway
COPY --from=slim /slim/ /
COPY --from=build /gateway/ /app/
USER node
${imageTail(GATEWAY_PORT, ["node", "packages/orchestrator/dist/main.js"], ["mcp", "--http", "--port", String(GATEWAY_PORT)])}`;
}

export async function generatedFiles(): Promise<Generated[]> {
  const servers = readRegistry();
  const files: Generated[] = [
    { path: "docs/errors.md", content: renderErrorTable(), between: [START, END] },
    { path: "docs/security.md", content: renderMetadataTable(), between: [START, END] },
    { path: "README.md", content: await serverTable(servers), between: [START, END] },
    { path: "README.md", content: renderClientConfigs(), between: [CLIENTS_START, CLIENTS_END] },
    { path: "docker-compose.yml", content: composeFile(servers) },
    { path: "Dockerfile", content: await dockerfile(servers) },
    { path: KUBERNETES_FILE, content: kubernetesFile(servers) },
    { path: REGISTRY_PACKAGE, content: registryPackage(servers) },
    { path: ROOT_PACKAGE, content: rootPackage(servers) },
    { path: SERVER_MODULES_FILE, content: serverModules(servers) },
  ];
  for (const s of servers) {
    const def = await loadServer(s.name);
    files.push({ path: `${s.dir}/README.md`, content: renderServerReference(def), between: [START, END] });
  }
  return files;
}

/** What the file at `g.path` should contain, given what it contains now. */
export async function expectedText(g: Generated): Promise<string> {
  if (!g.between) return g.content;
  const now = await readFile(join(REPO_ROOT, g.path), "utf8");
  return replaceBetween(now, g.between, g.content, g.path);
}
