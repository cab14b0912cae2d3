import { callTool } from "@roadnerd/conventions/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";
import { journalTailTool } from "../../src/tools/journal-tail.ts";
import { type BootedService, bootService, createClient } from "../helpers/booted.ts";
import { fakeSystemd } from "../helpers/no-systemd.ts";
import { SEQ_LINE } from "../helpers/test-units.ts";

const PREFIX = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z rn-logger\[\d+\]: /;

describe("journal_tail against a booted systemd", () => {
  let booted: BootedService;
  beforeAll(async () => {
    booted = await bootService();
  }, 60_000);
  afterAll(async () => {
    await booted?.stop();
  });
  const tail = (input: Record<string, unknown>) => createClient(booted.server.url).call("journal_tail", input);

  it("the unit's own lines, oldest first, the secret masked and the long line cut", async () => {
    // journald writes what it reads from the unit's stdout a moment after the unit exits: poll, bounded.
    let r = await tail({ name: "rn-logger" });
    for (let i = 0; i < 30 && !(r.lines as string[]).some((l) => l.endsWith("last line")); i++) {
      await new Promise((res) => setTimeout(res, 100));
      r = await tail({ name: "rn-logger" });
    }
    const lines = r.lines as string[];
    const long = lines.find((l) => l.includes("1x2x3")) as string;
    const prefix = long.match(PREFIX)?.[0] ?? "";
    const own = lines.filter((l) => PREFIX.test(l)).map((l) => l.replace(PREFIX, ""));
    expect(own).toEqual([
      "first line",
      "connecting with password=[masked] now",
      `${SEQ_LINE.slice(0, 399 - prefix.length)}…`,
      "last line",
    ]);
    expect(long).toHaveLength(400);
    // systemd's own lines about the unit are part of its journal too.
    expect(lines.some((l) => /systemd\[1\]: Starting rn-logger\.service - RoadNerd logger\.\.\.$/.test(l))).toBe(true);
    expect(lines.some((l) => /systemd\[1\]: Finished rn-logger\.service - RoadNerd logger\.$/.test(l))).toBe(true);
    expect(lines.join("\n")).not.toContain("hunter2");
    expect(r).toMatchObject({ name: "rn-logger.service", truncated: false });
    expect(r.summary).toBe(`${lines.length} lines of rn-logger.service; last: ${lines.at(-1)}`);
  });

  it("lines bounds the tail and says it was cut", async () => {
    const all = (await tail({ name: "rn-logger" })).lines as string[];
    const r = await tail({ name: "rn-logger", lines: 2 });
    expect(r.lines).toEqual(all.slice(-2));
    expect(r.truncated).toBe(true);
    expect(r.summary).toMatch(/^2 latest lines of rn-logger\.service; last: /);
  });

  it("a failed unit's journal says why", async () => {
    const r = await tail({ name: "rn-broken.service" });
    const lines = r.lines as string[];
    expect(lines.some((l) => l.endsWith("rn-broken.service: Main process exited, code=exited, status=1/FAILURE"))).toBe(
      true,
    );
    expect(lines.some((l) => l.endsWith("rn-broken.service: Failed with result 'exit-code'."))).toBe(true);
  });

  it("a unit with no lines: an empty list", async () => {
    expect(await tail({ name: "no-such-unit" })).toMatchObject({
      name: "no-such-unit.service",
      lines: [],
      truncated: false,
      summary: "no journal lines for no-such-unit.service",
    });
  });
});

describe("journal_tail without systemd", () => {
  it("on this machine: E_UNSUPPORTED, even though journalctl could read files (see booted.ts)", async () => {
    await expect(callTool(server, journalTailTool, { name: "ssh" })).rejects.toMatchObject({
      code: "E_UNSUPPORTED",
      message: expect.stringContaining("systemd is not running as PID 1"),
    });
  });

  it("no journalctl: E_NO_BINARY", async () => {
    const fake = await fakeSystemd({ missing: true });
    try {
      await expect(callTool(server, journalTailTool, { name: "ssh" }, { env: fake.env })).rejects.toMatchObject({
        code: "E_NO_BINARY",
        message: expect.stringContaining("journalctl is not installed"),
      });
    } finally {
      await fake.cleanup();
    }
  });

  it("asks for one line more than wanted, as JSON, and nothing else", async () => {
    const fake = await fakeSystemd({ output: "" });
    try {
      await callTool(server, journalTailTool, { name: "ssh", lines: 5 }, { env: fake.env });
      await callTool(server, journalTailTool, { name: "getty@tty1.service" }, { env: fake.env });
      const fields = "--output-fields=MESSAGE,SYSLOG_IDENTIFIER,_COMM,_PID,SYSLOG_PID";
      expect(await fake.runs()).toEqual([
        ["journalctl", "--unit=ssh.service", "--lines=6", "--output=json", fields, "--no-pager", "--quiet"],
        ["journalctl", "--unit=getty@tty1.service", "--lines=121", "--output=json", fields, "--no-pager", "--quiet"],
      ]);
    } finally {
      await fake.cleanup();
    }
  });
});
