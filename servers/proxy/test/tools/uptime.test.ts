import { readFileSync } from "node:fs";
import { callTool } from "@roadnerd/conventions/testing";
import { describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";
import { uptime } from "../../src/tools/uptime.ts";

describe("uptime", () => {
  it("reports the machine's real uptime and load", async () => {
    const before = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
    const r = await callTool(server, uptime, {});
    const after = Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]);
    expect(r.uptime_s).toBeGreaterThanOrEqual(Math.floor(before));
    expect(r.uptime_s).toBeLessThanOrEqual(Math.ceil(after));
    expect(r.load).toHaveLength(3);
    expect(r.summary).toMatch(/^up \d+ h, load /);
  });

  it("refuses unknown input keys with the valid ones", async () => {
    await expect(callTool(server, uptime, { verbose: true })).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
      message: expect.stringContaining("valid keys"),
    });
  });
});
