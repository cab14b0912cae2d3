/**
 * Bad input for every tool and the stream: a typed E_INVALID_INPUT, and nothing spawned — with systemd
 * "running" (SYSTEMD_BOOTED_DIR exists) and systemctl/journalctl on EXEC_PATH recording every run, so a value
 * that slipped through would show up in the log.
 */
import { callTool, collectStream, liveProcessGroups } from "@roadnerd/conventions/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "../src/server.ts";
import { journalFollowStream } from "../src/streams/journal-follow.ts";
import { journalTailTool } from "../src/tools/journal-tail.ts";
import { serviceStatus } from "../src/tools/service-status.ts";
import { type FakeSystemd, fakeSystemd } from "./helpers/no-systemd.ts";

const BAD_NAMES = [
  "--help",
  "-x",
  "a;b",
  "foo@.service", // a template, not a unit that runs
  "../x",
  "x".repeat(300),
  "x".repeat(248),
  "foo bar",
  "x.service y.service",
  "",
  "a\nb",
  "$(id)",
  "`id`",
  "ssh*",
  "ssh?",
  "[ab].service",
  "@x.service",
  "a/b.service",
  "~root",
  "ssh.service\u0000",
  "ss\u00adh",
  "\uff0dhelp",
  "--unit=ssh",
  "-.mount",
];

let fake: FakeSystemd;
beforeAll(async () => {
  fake = await fakeSystemd({ output: "" });
});
afterAll(async () => {
  await fake.cleanup();
});

describe("bad unit names", () => {
  it.each(BAD_NAMES.map((name) => [JSON.stringify(name).slice(0, 40), name]))("%s", async (_label, name) => {
    const env = fake.env;
    for (const tool of [serviceStatus, journalTailTool]) {
      await expect(callTool(server, tool, { name }, { env }), tool.name).rejects.toMatchObject({
        code: "E_INVALID_INPUT",
      });
    }
    await expect(collectStream(server, journalFollowStream, { name }, { env })).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
    });
  });

  it("none of them ran anything", async () => {
    expect(await fake.runs()).toEqual([]);
    expect(liveProcessGroups()).toBe(0);
  });
});

describe("other bad input", () => {
  it.each([
    ["journal_tail lines 0", journalTailTool, { name: "ssh", lines: 0 }],
    ["journal_tail lines 501", journalTailTool, { name: "ssh", lines: 501 }],
    ["journal_tail lines 1.5", journalTailTool, { name: "ssh", lines: 1.5 }],
    ["journal_tail lines as a string", journalTailTool, { name: "ssh", lines: "12" }],
    ["journal_tail without a name", journalTailTool, {}],
    ["service_status without a name", serviceStatus, {}],
    ["service_status name as a list", serviceStatus, { name: ["ssh", "cron"] }],
    ["service_status unknown key", serviceStatus, { name: "ssh", user: true }],
  ] as const)("%s", async (_label, tool, input) => {
    await expect(callTool(server, tool, input as Record<string, unknown>, { env: fake.env })).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
    });
    expect(await fake.runs()).toEqual([]);
  });

  it("the error says what a unit name looks like", async () => {
    await expect(callTool(server, serviceStatus, { name: "a;b" }, { env: fake.env })).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
      message: expect.stringContaining("unit name"),
    });
  });
});
