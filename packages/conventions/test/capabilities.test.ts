// Which container runtime /healthz names, from the files and variables each engine leaves (a fake root here).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { detectContainer } from "../src/runtime/capabilities.ts";

const roots: string[] = [];
function fakeRoot(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "rn-container-"));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

describe("detectContainer", () => {
  it("names nothing on a plain host", async () => {
    expect(await detectContainer({}, fakeRoot({ "proc/1/cgroup": "0::/init.scope\n" }))).toBeNull();
  });

  it("names docker from /.dockerenv, podman from /run/.containerenv", async () => {
    expect(await detectContainer({}, fakeRoot({ ".dockerenv": "" }))).toBe("docker");
    expect(await detectContainer({}, fakeRoot({ "run/.containerenv": "engine=podman\n" }))).toBe("podman");
  });

  it("names podman on a read-only root, where it writes no /run/.containerenv", async () => {
    // What podman 4.3 gives a compose service with read_only: true: its variable and its cgroup, no file.
    const cgroup = "0::/libpod_parent/libpod-aac783b41f16\n";
    expect(await detectContainer({ container: "podman" }, fakeRoot({ "proc/1/cgroup": cgroup }))).toBe("podman");
    expect(await detectContainer({}, fakeRoot({ "proc/1/cgroup": cgroup }))).toBe("podman");
  });

  it("names docker by its cgroup and kubernetes by its variable", async () => {
    expect(await detectContainer({}, fakeRoot({ "proc/1/cgroup": "0::/system.slice/docker-1f2e.scope\n" }))).toBe(
      "docker",
    );
    expect(await detectContainer({ KUBERNETES_SERVICE_HOST: "10.0.0.1" }, fakeRoot({}))).toBe("kubernetes");
  });
});
