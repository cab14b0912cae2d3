/**
 * Every registered server is complete: it declares itself in its package.json, its definition matches, its
 * README documents every tool and stream with curl, one file per tool and a test beside it. A server added by
 * `pnpm new-server` passes all of this before its first real tool.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROADNERD_PORT_BLOCK } from "@roadnerd/conventions/internal";
import { curlExamples } from "@roadnerd/conventions/testing";
import {
  loadServer,
  plannedPort,
  REPO_ROOT,
  type RegisteredServer,
  readRegistry,
  selectedServers,
} from "@roadnerd/registry";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { registryPackage, rootPackage, serverModules } from "../scripts/lib/registry-files.ts";
import { BIN_LAUNCHER } from "../scripts/lib/skeleton.ts";

const servers = readRegistry();
const kebab = (name: string) => name.replaceAll("_", "-");
const read = (path: string) => readFileSync(join(REPO_ROOT, path), "utf8");

describe("the server registry", () => {
  it("holds every folder of servers/, each with its own name and default port", () => {
    const folders = readdirSync(join(REPO_ROOT, "servers"), { withFileTypes: true }).filter((d) => d.isDirectory());
    expect(servers.map((s) => s.name).sort()).toEqual(folders.map((d) => d.name).sort());
    const ports = servers.map((s) => s.defaultPort);
    expect(new Set(ports).size).toBe(ports.length);
    // The kernel refuses these as targets of another server (sibling ports): every default port is inside.
    for (const port of ports) {
      expect(port).toBeGreaterThan(ROADNERD_PORT_BLOCK.first);
      expect(port).toBeLessThanOrEqual(ROADNERD_PORT_BLOCK.last);
    }
  });

  it("imports every server through its package, never by a path out of packages/registry", async () => {
    const src = join(REPO_ROOT, "packages/registry/src");
    for (const file of readdirSync(src)) expect(read(`packages/registry/src/${file}`), file).not.toMatch(/["'`]\.\.\//);
    await expect(loadServer("no-such-server")).rejects.toThrow(/not a registered server/);
  });

  it("gives a new server the port after the highest one declared", () => {
    const highest = Math.max(...servers.map((s) => s.defaultPort));
    expect(plannedPort(servers.map((s) => s.defaultPort))).toBe(highest + 1);
    expect(plannedPort([7101, 7105, 7103])).toBe(7106);
    expect(plannedPort([])).toBe(7101);
  });
});

describe("the registry's links to the servers (written by pnpm generate and pnpm new-server)", () => {
  const [first] = servers;
  if (!first) throw new Error("no servers registered");
  const added = { ...first, name: "new-one", packageName: "@roadnerd/new-one" };

  it("import a new server through its package, its name quoted when it is not an identifier", () => {
    expect(serverModules([...servers, added])).toContain('  "new-one": () => import("@roadnerd/new-one/server"),\n');
    expect(serverModules(servers)).not.toContain("new-one");
  });

  it("depend on exactly the servers there are, and keep the registry's own dependencies", () => {
    const deps = (list: readonly RegisteredServer[]) => JSON.parse(registryPackage(list)).dependencies;
    expect(deps([...servers, added])).toMatchObject({ "@roadnerd/new-one": "workspace:*" });
    const without = deps(servers.filter((s) => s.name !== first.name));
    expect(without).not.toHaveProperty(first.packageName);
    expect(without).toHaveProperty("@roadnerd/conventions", "workspace:*");
  });

  it("the root depends on every server too (its bin at the root), keeping its own devDependencies", () => {
    const deps = (list: readonly RegisteredServer[]) => JSON.parse(rootPackage(list)).devDependencies;
    expect(deps([...servers, added])).toMatchObject({ "@roadnerd/new-one": "workspace:*" });
    const without = deps(servers.filter((s) => s.name !== first.name));
    expect(without).not.toHaveProperty(first.packageName);
    expect(without).toHaveProperty("@roadnerd/orchestrator", "workspace:*");
    expect(without).toHaveProperty("vitest");
  });
});

describe("ROADNERD_ONLY", () => {
  it("narrows the servers a build or suite works on, and refuses a name that is not registered", () => {
    expect(selectedServers({}).map((s) => s.name)).toEqual(servers.map((s) => s.name));
    const [first, last] = [servers[0], servers.at(-1)];
    if (!first || !last) throw new Error("no servers registered");
    expect(selectedServers({ ROADNERD_ONLY: ` ${last.name}, ${first.name} ` }).map((s) => s.name)).toEqual(
      [first.name, last.name].filter((n, i, a) => a.indexOf(n) === i),
    );
    expect(() => selectedServers({ ROADNERD_ONLY: "no-such-server" })).toThrow(/unknown servers: no-such-server/);
  });
});

describe.each(servers)("server $name", (s) => {
  it("its definition is the one its package.json declares", async () => {
    const def = await loadServer(s.name);
    expect({ name: def.name, port: def.defaultPort, version: def.version, bin: def.bin }).toEqual({
      name: s.name,
      port: s.defaultPort,
      version: s.version,
      bin: `roadnerd-${s.name}`,
    });
    expect(read(`${s.dir}/src/main.ts`)).toContain("void runMain(server);");
    expect(read(`${s.dir}/bin/roadnerd-${s.name}.mjs`), "its bin launches dist/main.js").toBe(BIN_LAUNCHER);
    expect(def.tools.length).toBeGreaterThan(0);
  });

  it("one file per tool and stream, named after it, each with a test beside it", async () => {
    const def = await loadServer(s.name);
    for (const [kind, items] of [
      ["tools", def.tools],
      ["streams", def.streams],
    ] as const) {
      for (const item of items) {
        const file = `${kebab(item.name)}.ts`;
        expect(existsSync(join(REPO_ROOT, s.dir, "src", kind, file)), `src/${kind}/${file}`).toBe(true);
        // A tool's test may link a veth into the test namespace, which names it *.links.test.ts (ADR 0029).
        const test = `test/${kind}/${kebab(item.name)}.test.ts`;
        const linked = test.replace(/\.test\.ts$/, ".links.test.ts");
        expect(existsSync(join(REPO_ROOT, s.dir, test)) || existsSync(join(REPO_ROOT, s.dir, linked)), test).toBe(true);
      }
    }
  });

  it("its README shows curl for /healthz, /actions, every tool and every stream", async () => {
    const def = await loadServer(s.name);
    const lines = curlExamples(read(`${s.dir}/README.md`))
      .map((e) => e.line)
      .join("\n");
    const port = `localhost:${s.defaultPort}`;
    expect(lines).toContain(`${port}/healthz`);
    expect(lines).toContain(`${port}/actions`);
    for (const t of def.tools) expect(lines, `curl for ${t.name}`).toContain(`/actions/${t.name}`);
    for (const st of def.streams) expect(lines, `curl for /sse/${st.name}`).toContain(`/sse/${st.name}`);
  });

  it("docker-compose.yml runs it from its bundle on its default port", () => {
    const compose = parse(read("docker-compose.yml")) as {
      services: Record<string, { build: { target: string }; environment: Record<string, string> }>;
    };
    // Its own Dockerfile target, whose entrypoint is the bundle.
    expect(compose.services[s.name]?.build.target).toBe(s.name);
    expect(read("Dockerfile")).toContain(`ENTRYPOINT ["node","${s.entry}"]`);
    expect(compose.services[s.name]?.environment.PORT).toBe(String(s.defaultPort));
  });

  it("scripts/setup.sh installs the Debian packages it needs", () => {
    const setup = read("scripts/setup.sh");
    const listed = /DEB_PACKAGES=\(([^)]*)\)/.exec(setup)?.[1]?.split(/\s+/) ?? [];
    for (const pkg of s.debian) expect(listed).toContain(pkg);
  });
});
