// Which container runtime /healthz names, from the files and variables each engine leaves (a fake root here).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { detectContainer, findBinary } from "../src/runtime/capabilities.ts";

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

describe("findBinary: what a shell's `command -v` would run", () => {
  it("is a regular executable file, not a directory, a FIFO or a file without the x bit named like it", () => {
    const root = fakeRoot({});
    const dir = (n: string) => {
      const d = join(root, n);
      mkdirSync(d);
      return d;
    };
    const isDir = dir("a");
    mkdirSync(join(isDir, "ip"));
    const isFifo = dir("b");
    execFileSync("mkfifo", ["-m", "0755", join(isFifo, "ip")]);
    const noX = dir("c");
    writeFileSync(join(noX, "ip"), "#!/bin/sh\n", { mode: 0o644 });
    const real = dir("d");
    writeFileSync(join(real, "ip"), "#!/bin/sh\n", { mode: 0o755 });
    expect(findBinary("ip", [isDir, isFifo, noX].join(":"))).toBe(false);
    expect(findBinary("ip", [isDir, isFifo, noX, real].join(":"))).toBe(true);
  });
});

describe("detectContainer: a marker file's place taken by a FIFO", () => {
  it("answers without waiting for a writer (the event loop is not held)", async () => {
    const root = fakeRoot({ "proc/1/cgroup": "0::/init.scope\n" });
    mkdirSync(join(root, "run/systemd"), { recursive: true });
    execFileSync("mkfifo", [join(root, "run/systemd/container")]);
    expect(await detectContainer({}, root)).toBeNull();
  });
});
