/**
 * A standalone server sets its V8 flags once it serves and trims what its start left behind (ADRs 0041, 0062):
 * started with `--trace-gc`, its first memory-reducing full GC comes after its listening line, a second after
 * it serves when that second was quiet (or after the first quiet spell, 15–20 s, on a busy machine).
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { REPO_ROOT } from "@roadnerd/registry";
import { scaledMs } from "@roadnerd/testkit";
import { describe, expect, it } from "vitest";

describe("a standalone server's quiet trim", () => {
  it("collects with a memory-reducing GC once it has served, not before", async () => {
    const child = spawn(process.execPath, ["--trace-gc", join(REPO_ROOT, "servers/dns-config/dist/main.js")], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", PORT: "0", LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const lines: string[] = [];
    try {
      const reduced = await new Promise<boolean>((resolve) => {
        const deadline = setTimeout(() => resolve(false), scaledMs(30_000));
        let buffer = "";
        child.stdout.on("data", (d: Buffer) => {
          buffer += d.toString();
          const parts = buffer.split("\n");
          buffer = parts.pop() ?? "";
          lines.push(...parts);
          if (parts.some((l) => l.includes("Mark-Compact (reduce)"))) {
            clearTimeout(deadline);
            resolve(true);
          }
        });
        child.once("exit", () => {
          clearTimeout(deadline);
          resolve(false);
        });
      });
      expect(reduced, lines.slice(-5).join("\n")).toBe(true);
      const listening = lines.findIndex((l) => l.includes('"msg":"listening"'));
      const firstReduce = lines.findIndex((l) => l.includes("Mark-Compact (reduce)"));
      expect(listening).toBeGreaterThanOrEqual(0);
      expect(firstReduce).toBeGreaterThan(listening);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
