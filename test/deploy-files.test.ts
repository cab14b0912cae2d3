// The compose file and the Dockerfile as they promise, read (test/containers runs them in a real engine: `pnpm
// test:containers`). Both are generated from the registry (test/generated.test.ts keeps them current).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, readRegistry } from "@roadnerd/registry";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const read = (p: string) => readFileSync(join(REPO_ROOT, p), "utf8");

interface Service {
  build: { context: string; target: string };
  image: string;
  network_mode?: string;
  init?: boolean;
  pid?: string;
  user?: string;
  environment: Record<string, string>;
  read_only?: boolean;
  cap_drop?: string[];
  cap_add?: string[];
  volumes?: string[];
  extra_hosts?: string[];
  healthcheck?: { test: string[] };
}

const compose = parse(read("docker-compose.yml")) as { services: Record<string, Service> };
const dockerfile = read("Dockerfile");
const servers = readRegistry();
const svc = (name: string) => compose.services[name] as Service;

/** The Dockerfile's stage named `target`: from its FROM line to the blank line that ends it. */
function stage(target: string): string {
  const start = dockerfile.search(new RegExp(`^FROM \\S+ AS ${target}$`, "m"));
  expect(start, `stage ${target}`).toBeGreaterThanOrEqual(0);
  const end = dockerfile.indexOf("\n\n", start);
  return end < 0 ? dockerfile.slice(start) : dockerfile.slice(start, end);
}

describe("docker-compose.yml", () => {
  it("has one service per registered server, the gateway and nothing else", () => {
    expect(Object.keys(compose.services).sort()).toEqual([...servers.map((s) => s.name), "gateway"].sort());
  });

  it.each([...servers.map((s) => ({ name: s.name, port: s.defaultPort })), { name: "gateway", port: 7100 }])(
    "$name: its own image target, host network on loopback, an init, locked down, health-checked",
    ({ name, port }) => {
      const s = svc(name);
      expect(s.build).toMatchObject({ context: ".", target: name });
      expect(s.image).toBe(`roadnerd-${name}`);
      expect(s.network_mode).toBe("host");
      expect(s.init).toBe(s.pid !== "host");
      expect(s.read_only).toBe(true);
      expect(s.cap_drop).toEqual(["ALL"]);
      expect(s.healthcheck?.test.join(" ")).toContain(`127.0.0.1:'+'${port}'+'/healthz`);
      if (name !== "gateway") expect(s.environment.HOST).toBe("127.0.0.1");
    },
  );

  it("the gateway reaches every server by its service name", () => {
    const g = svc("gateway");
    for (const s of servers) {
      expect(g.extra_hosts).toContain(`${s.name}:127.0.0.1`);
      const key = `ROADNERD_SERVER_${s.name.toUpperCase().replace(/-/g, "_")}_URL`;
      expect(g.environment[key]).toBe(`http://${s.name}:${s.defaultPort}`);
      expect(svc(s.name).environment.ALLOWED_HOSTS).toBe(s.name);
    }
  });

  it("each server sees what it diagnoses, with no more privilege than that", () => {
    expect(svc("storage")).toMatchObject({ user: "root", cap_add: ["DAC_READ_SEARCH"] });
    expect(svc("storage").volumes).toContain("/:/host:ro");
    expect(svc("proxy").environment.PROXY_ROOT).toBe("/host");
    expect(svc("proxy").volumes).toEqual(["/etc:/host/etc:ro"]);
    expect(svc("ports").volumes).toEqual(["/etc/passwd:/etc/passwd:ro", "/etc/group:/etc/group:ro"]);
    expect(svc("dns-config").volumes).toContain("/usr:/host/usr:ro");
    expect(svc("service").user).toBe("root");
    expect(svc("service").cap_add).toBeUndefined();
    for (const name of ["network", "dns-config", "proxy", "webcheck", "gateway"]) {
      expect(svc(name).user, name).toBeUndefined();
      expect(svc(name).cap_add, name).toBeUndefined();
    }
    // Every mount of the host is read-only.
    for (const s of Object.values(compose.services)) for (const v of s.volumes ?? []) expect(v).toMatch(/:ro$/);
  });
});

describe("Dockerfile", () => {
  it("pins the same pnpm as scripts/setup.sh and package.json", () => {
    const pnpm = /pnpm@([\d.]+)/.exec(dockerfile)?.[1];
    expect(pnpm).toBeDefined();
    expect(read("scripts/setup.sh")).toContain(`PNPM_VERSION=${pnpm}`);
    expect(JSON.parse(read("package.json")).packageManager).toBe(`pnpm@${pnpm}`);
  });

  it("builds once (one pnpm build) and ships no source maps", () => {
    expect(dockerfile.match(/pnpm build/g)).toHaveLength(1);
    expect(stage("build")).toContain("find servers packages -name '*.map' -delete");
  });

  it.each(servers)("$name: a target on the slim root unless it needs the browser, with a HEALTHCHECK", (s) => {
    const text = stage(s.name);
    expect(text).toContain(`COPY --from=build /out/${s.dir} /app/${s.dir}`);
    expect(text).toContain(`ENTRYPOINT ["node","${s.entry}"]`);
    expect(text).toMatch(/^HEALTHCHECK .*\/healthz/m);
    expect(text).toContain(`PORT=${s.defaultPort}`);
    if (s.debian.includes("chromium")) {
      expect(text).toMatch(/^FROM \$\{NODE_BASE\} AS /);
      expect(text).toMatch(/apt-get install .*\bchromium\b/);
    } else {
      expect(text).toMatch(/^FROM scratch AS /);
      expect(text).not.toContain("chromium");
    }
  });

  it("Chromium only in webcheck's target", () => {
    const withChromium = [...dockerfile.matchAll(/^FROM \S+ AS (\S+)$/gm)]
      .map((m) => m[1] as string)
      .filter((t) => stage(t).includes("chromium"));
    expect(withChromium).toEqual(["webcheck"]);
  });

  it("the slim stage carries every other server's Debian packages, and the gateway runs the MCP gateway", () => {
    for (const pkg of servers.filter((s) => !s.debian.includes("chromium")).flatMap((s) => s.debian))
      expect(stage("slim")).toMatch(new RegExp(`install .*\\b${pkg}\\b`));
    expect(stage("gateway")).toContain('CMD ["mcp","--http","--port","7100"]');
  });
});
