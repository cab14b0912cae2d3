// No Docker engine runs here, so the compose file and the Dockerfile are checked by reading them. Both are
// generated from the registry (test/generated.test.ts keeps them current); this checks what they promise.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, readRegistry } from "@roadnerd/registry";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const read = (p: string) => readFileSync(join(REPO_ROOT, p), "utf8");

interface Service {
  command: string[];
  network_mode?: string;
  environment: Record<string, string>;
  read_only?: boolean;
  cap_drop?: string[];
  healthcheck?: { test: string[] };
}

describe("docker-compose.yml", () => {
  const compose = parse(read("docker-compose.yml")) as { services: Record<string, Service> };

  it("has one service per registered server and nothing else", () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      readRegistry()
        .map((s) => s.name)
        .sort(),
    );
  });

  it.each(readRegistry())("$name sees the host's network, binds loopback, is locked down and health-checked", (s) => {
    const svc = compose.services[s.name] as Service;
    expect(svc.network_mode).toBe("host");
    expect(svc.environment.HOST).toBe("127.0.0.1");
    expect(svc.read_only).toBe(true);
    expect(svc.cap_drop).toEqual(["ALL"]);
    expect(svc.healthcheck?.test.join(" ")).toContain(`127.0.0.1:${s.defaultPort}/healthz`);
  });
});

describe("Dockerfile", () => {
  it("pins the same pnpm as scripts/setup.sh and package.json", () => {
    const pnpm = /pnpm@([\d.]+)/.exec(read("Dockerfile"))?.[1];
    expect(pnpm).toBeDefined();
    expect(read("scripts/setup.sh")).toContain(`PNPM_VERSION=${pnpm}`);
    expect(JSON.parse(read("package.json")).packageManager).toBe(`pnpm@${pnpm}`);
  });

  it("ships every server's bundle and the Debian packages their commands need", () => {
    const dockerfile = read("Dockerfile");
    expect(dockerfile).toContain('for d in servers/*/; do mkdir -p "/out/$d" && cp -r "$d/dist" "/out/$d"; done');
    for (const pkg of readRegistry().flatMap((s) => s.debian))
      expect(dockerfile).toMatch(new RegExp(`install .*\\b${pkg}\\b`));
  });
});
