/** The module file is checked at start-up: durations, unknown probers and options a prober refuses stop it. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { loadProbeModules } from "../../src/probe/modules.ts";
import { defineProber } from "../../src/probe/prober.ts";
import { probeTimeoutMs } from "../../src/probe/run-probe.ts";

const echo = defineProber({
  name: "echo",
  options: z.strictObject({ loud: z.boolean().default(false) }),
  defaults: { echo_quiet: {}, echo_loud: { loud: true } },
  run: async (_target, o) => ({ success: o.loud, series: [] }),
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rn-modules-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(text: string): Promise<string> {
  const path = join(dir, `m${Math.random().toString(36).slice(2)}.yml`);
  await writeFile(path, text);
  return path;
}

describe("loadProbeModules", () => {
  it("serves the probers' defaults without a file", async () => {
    const modules = await loadProbeModules([echo], undefined);
    expect([...modules.keys()]).toEqual(["echo_quiet", "echo_loud"]);
    expect(modules.get("echo_loud")?.options).toEqual({ loud: true });
  });

  it("reads modules, their timeouts and options (YAML or JSON)", async () => {
    const yaml = await loadProbeModules(
      [echo],
      await file("modules:\n  a: { prober: echo, timeout: 1.5s, echo: { loud: true } }\n"),
    );
    expect(yaml.get("a")).toMatchObject({ timeoutMs: 1500, options: { loud: true } });
    const json = await loadProbeModules([echo], await file('{"modules":{"b":{"prober":"echo","timeout":"250ms"}}}'));
    expect(json.get("b")).toMatchObject({ timeoutMs: 250, options: { loud: false } });
  });

  it("refuses an unknown prober, bad options, a bad duration or an unreadable file", async () => {
    const message = async (path: string) => {
      const err = await loadProbeModules([echo], path).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (!(err instanceof Error)) throw new Error("the file was accepted");
      return err.message;
    };
    expect(await message(await file("modules:\n  a: { prober: icmp }\n"))).toMatch(/unknown prober icmp/);
    expect(await message(await file("modules:\n  a: { prober: echo, echo: { loud: 3 } }\n"))).toMatch(/module a: loud/);
    expect(await message(await file("modules:\n  a: { prober: echo, timeout: 5 }\n"))).toMatch(/timeout/);
    expect(await message(await file("modules:\n  a: { prober: echo, timeout: 99s }\n"))).toMatch(/timeout/);
    expect(await message(join(dir, "absent.yml"))).toMatch(/cannot read/);
  });
});

describe("probeTimeoutMs", () => {
  const module = (timeoutMs: number | undefined) => ({ name: "m", prober: echo, timeoutMs, options: {} });
  it("takes the module's, bounded by the scraper's less a margin, else the scraper's, else 5 s", () => {
    expect(probeTimeoutMs(module(2000), "10")).toBe(2000);
    expect(probeTimeoutMs(module(2000), "1")).toBe(500);
    expect(probeTimeoutMs(module(undefined), "3")).toBe(2500);
    expect(probeTimeoutMs(module(undefined), undefined)).toBe(5000);
    expect(probeTimeoutMs(module(undefined), "junk")).toBe(5000);
  });
});
