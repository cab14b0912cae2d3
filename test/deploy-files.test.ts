// No Docker engine runs here, so the compose file and the Dockerfile are checked by reading them.
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const root = new URL("../", import.meta.url);
const read = (p: string) => readFileSync(new URL(p, root), "utf8");

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

  it("runs each service from a built bundle of an existing server", () => {
    for (const [name, svc] of Object.entries(compose.services)) {
      expect(svc.command[0]).toBe(`servers/${name}/dist/main.js`);
      expect(existsSync(new URL(`servers/${name}/src/main.ts`, root))).toBe(true);
      // The Dockerfile copies that server's dist into the image.
      expect(read("Dockerfile")).toContain(`/src/servers/${name}/dist`);
    }
  });

  it("network sees the host's network, binds loopback, is locked down and health-checked", () => {
    const net = compose.services.network as Service;
    expect(net.network_mode).toBe("host");
    expect(net.environment.HOST).toBe("127.0.0.1");
    expect(net.read_only).toBe(true);
    expect(net.cap_drop).toEqual(["ALL"]);
    expect(net.healthcheck?.test.join(" ")).toContain(`127.0.0.1:${net.environment.PORT}/healthz`);
  });

  it("uses the same port as the server's default", async () => {
    const { networkServer } = await import("../servers/network/src/server.ts");
    expect(Number(compose.services.network?.environment.PORT)).toBe(networkServer.defaultPort);
  });
});

describe("Dockerfile", () => {
  it("pins the same pnpm as scripts/setup.sh and package.json", () => {
    const pnpm = /pnpm@([\d.]+)/.exec(read("Dockerfile"))?.[1];
    expect(pnpm).toBeDefined();
    expect(read("scripts/setup.sh")).toContain(`PNPM_VERSION=${pnpm}`);
    expect(JSON.parse(read("package.json")).packageManager).toBe(`pnpm@${pnpm}`);
  });
});
