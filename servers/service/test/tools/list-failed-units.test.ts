import { readFileSync } from "node:fs";
import { join } from "node:path";
import { callTool } from "@roadnerd/conventions/testing";
import { scaledDeadline } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseListUnits } from "../../src/parse/list-units.ts";
import { server } from "../../src/server.ts";
import { listFailedUnits } from "../../src/tools/list-failed-units.ts";
import { type BootedService, bootService, createClient } from "../helpers/booted.ts";
import { fakeSystemd } from "../helpers/no-systemd.ts";

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const fixture = (p: string) => readFileSync(join(import.meta.dirname, "../fixtures", p), "utf8");

describe("list_failed_units against a booted systemd", () => {
  let booted: BootedService;
  beforeAll(async () => {
    booted = await bootService();
  }, 60_000);
  afterAll(async () => {
    await booted?.stop();
  });

  it("lists the one failed unit with when it failed", async () => {
    const r = await createClient(booted.server.url).call("list_failed_units", scaledDeadline());
    expect(r).toEqual({
      failed: [{ name: "rn-broken.service", since: expect.stringMatching(ISO), description: "RoadNerd broken" }],
      truncated: false,
      omitted: 0,
      next: { tool: "service/journal_tail", args: { name: "rn-broken.service" }, why: "why rn-broken.service failed" },
      summary: "1 failed: rn-broken.service",
    });
    const failed = r.failed as Array<{ since: string }>;
    expect((failed[0]?.since as string) >= booted.bootedAfter).toBe(true);
  });

  it("sees a unit that fails later, most recent first, and caps the list with limit", async () => {
    // Make the sleeper fail: kill its main process with a signal systemd records as a failure.
    booted.harness.systemctl("kill", "--signal=SIGKILL", "rn-sleeper.service");
    await booted.harness.waitFor(
      "rn-sleeper to fail",
      () => booted.harness.run(["systemctl", "is-failed", "rn-sleeper.service"]).stdout.trim() === "failed",
    );
    const client = createClient(booted.server.url);
    const all = await client.call("list_failed_units", scaledDeadline());
    expect((all.failed as Array<{ name: string }>).map((u) => u.name)).toEqual([
      "rn-sleeper.service",
      "rn-broken.service",
    ]);
    const capped = await client.call("list_failed_units", { limit: 1 });
    expect(capped).toMatchObject({
      failed: [{ name: "rn-sleeper.service", description: "RoadNerd sleeper" }],
      truncated: true,
      omitted: 1,
      summary: "2 failed: rn-sleeper.service and 1 more",
    });
    booted.harness.systemctl("restart", "rn-sleeper.service");
  });
});

describe("list_failed_units without systemd", () => {
  it("on this machine: E_UNSUPPORTED, systemd is not running", async () => {
    await expect(callTool(server, listFailedUnits, {})).rejects.toMatchObject({
      code: "E_UNSUPPORTED",
      message: expect.stringContaining("systemd is not running as PID 1"),
    });
  });

  it("no systemctl: E_NO_BINARY", async () => {
    const fake = await fakeSystemd({ missing: true });
    try {
      await expect(callTool(server, listFailedUnits, {}, { env: fake.env })).rejects.toMatchObject({
        code: "E_NO_BINARY",
      });
    } finally {
      await fake.cleanup();
    }
  });

  it("runs list-units --output=json and one show of the failed units, nothing else", async () => {
    const fake = await fakeSystemd({ output: "[]" });
    try {
      const r = await callTool(server, listFailedUnits, {}, { env: fake.env });
      expect(r).toEqual({ failed: [], truncated: false, omitted: 0, summary: "no failed units" });
      expect((await fake.runs()).sort()).toEqual([
        ["systemctl", "list-units", "--state=failed", "--output=json"],
        [
          "systemctl",
          "show",
          "--state=failed",
          "--property=Id,InactiveEnterTimestamp,InactiveEnterTimestampMonotonic",
          "--",
          "*",
        ],
      ]);
    } finally {
      await fake.cleanup();
    }
  });
});

describe("list_failed_units on recorded output (252) and documented output (255)", () => {
  const run = async (version: string) => {
    const fake = await fakeSystemd({
      byVerb: { "list-units": fixture(`${version}/list-failed.json`), show: fixture(`${version}/show-failed.txt`) },
    });
    try {
      return await callTool(server, listFailedUnits, {}, { env: fake.env });
    } finally {
      await fake.cleanup();
    }
  };

  it("252: the failed unit with the time it failed", async () => {
    expect(await run("systemd-252")).toEqual({
      failed: [{ name: "rn-broken.service", since: "2026-11-22T09:53:12Z", description: "RoadNerd broken" }],
      truncated: false,
      omitted: 0,
      next: { tool: "service/journal_tail", args: { name: "rn-broken.service" }, why: "why rn-broken.service failed" },
      summary: "1 failed: rn-broken.service",
    });
  });

  it("255: two failed units, the latest failure first", async () => {
    expect((await run("systemd-255")).failed).toEqual([
      {
        name: "fwupd-refresh.service",
        since: "2024-04-24T07:02:05Z",
        description: "Refresh fwupd metadata and update motd",
      },
      { name: "cups.service", since: "2024-04-24T06:31:40Z", description: "CUPS Scheduler" },
    ]);
  });
});

describe("list-units JSON fixtures", () => {
  it("252 (recorded) and 255", () => {
    expect(parseListUnits(fixture("systemd-252/list-failed.json"))).toEqual([
      { unit: "rn-broken.service", load: "loaded", active: "failed", sub: "failed", description: "RoadNerd broken" },
    ]);
    expect(parseListUnits(fixture("systemd-255/list-failed.json")).map((u) => u.unit)).toEqual([
      "cups.service",
      "fwupd-refresh.service",
    ]);
  });

  it("empty output is no units; a table instead of JSON (systemd before 246) is E_EXEC_FAILED", () => {
    expect(parseListUnits("")).toEqual([]);
    expect(() => parseListUnits("  UNIT LOAD ACTIVE SUB DESCRIPTION\n0 loaded units listed.")).toThrow(
      expect.objectContaining({ code: "E_EXEC_FAILED" }),
    );
  });
});
