import type { SseEvent } from "@roadnerd/client";
import { collectStream, isLive, pidsWhere } from "@roadnerd/conventions/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";
import { journalFollowStream } from "../../src/streams/journal-follow.ts";
import { type BootedService, bootService, createClient } from "../helpers/booted.ts";
import { fakeSystemd } from "../helpers/no-systemd.ts";

const LATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z rn-late\[\d+\]: /;

/** journalctl --follow processes of a unit, seen from here (the harness's PID namespace is a child of ours). */
const followers = (unit: string) =>
  pidsWhere("cmdline", (c) => c.startsWith("journalctl\0") && c.includes(`--unit=${unit}\0--follow`)).filter(isLive);

/** Bounded polling (30 s by default): a loaded machine may take seconds to start or stop a process. */
async function until(check: () => boolean, tries = 300): Promise<void> {
  for (let i = 0; i < tries && !check(); i++) await new Promise((r) => setTimeout(r, 100));
}

describe("journal_follow against a booted systemd", () => {
  let booted: BootedService;
  beforeAll(async () => {
    booted = await bootService();
  }, 60_000);
  afterAll(async () => {
    await booted?.stop();
  });

  it("a line logged after the stream starts arrives as a message, masked; the stream ends at its duration", async () => {
    const events: SseEvent[] = [];
    const reading = (async () => {
      for await (const e of createClient(booted.server.url).stream("journal_follow", {
        name: "rn-late",
        // Room for a loaded machine to start journalctl and the unit inside the duration.
        duration_ms: 15_000,
        run_id: "f1",
      })) {
        events.push(e);
      }
    })();
    await until(() => followers("rn-late.service").length === 1);
    // Start the unit until its own line has come through: journalctl needs a moment after it starts before it
    // follows from the end of the journal, and lines logged before that are not "new".
    const ownLine = () => events.some((e) => e.event === "message" && LATE.test((e.data as { line: string }).line));
    for (let i = 0; i < 24 && !ownLine(); i++) {
      booted.harness.systemctl("start", "rn-late.service");
      await until(ownLine, 5);
    }
    await reading;
    const messages = events.filter((e) => e.event === "message").map((e) => e.data as Record<string, string>);
    const own = messages.filter((m) => LATE.test(m.line ?? ""));
    expect(own.length).toBeGreaterThan(0);
    for (const m of own) {
      expect(m).toEqual({
        name: "rn-late.service",
        line: expect.stringMatching(/rn-late\[\d+\]: late line token=\[masked\]$/),
        summary: m.line,
        run_id: "f1",
      });
    }
    expect(JSON.stringify(messages)).not.toContain("abc123");
    expect(events.at(-1)).toMatchObject({ event: "end", data: { reason: "duration" } });
    // Its journalctl is gone with it.
    await until(() => followers("rn-late.service").length === 0);
    expect(followers("rn-late.service")).toEqual([]);
  });

  it("the journalctl process ends when the client goes away", async () => {
    const controller = new AbortController();
    const stream = createClient(booted.server.url).stream(
      "journal_follow",
      { name: "rn-sleeper", duration_ms: 120_000 },
      { signal: controller.signal },
    );
    const first = await stream.next();
    expect(first.value).toMatchObject({ event: "ping" });
    await until(() => followers("rn-sleeper.service").length === 1);
    const [pid] = followers("rn-sleeper.service");
    expect(pid).toBeGreaterThan(0);
    controller.abort();
    await stream.return(undefined).catch(() => {});
    await until(() => !isLive(pid as number));
    expect(isLive(pid as number)).toBe(false);
    expect(followers("rn-sleeper.service")).toEqual([]);
  });
});

describe("journal_follow without systemd", () => {
  it("on this machine: E_UNSUPPORTED before any process", async () => {
    await expect(collectStream(server, journalFollowStream, { name: "ssh", duration_ms: 500 })).rejects.toMatchObject({
      code: "E_UNSUPPORTED",
      message: expect.stringContaining("systemd is not running as PID 1"),
    });
  });

  it("no journalctl: E_NO_BINARY", async () => {
    const fake = await fakeSystemd({ missing: true });
    try {
      await expect(
        collectStream(server, journalFollowStream, { name: "ssh", duration_ms: 500 }, { env: fake.env }),
      ).rejects.toMatchObject({ code: "E_NO_BINARY", message: expect.stringContaining("journalctl") });
    } finally {
      await fake.cleanup();
    }
  });

  it("runs exactly journalctl --unit=<unit> --follow --lines=0 --output=json, and parses what it prints", async () => {
    const entry = JSON.stringify({
      __REALTIME_TIMESTAMP: "1713940215000000",
      SYSLOG_IDENTIFIER: "sshd",
      _PID: "77",
      MESSAGE: "Accepted publickey for ada",
    });
    const fake = await fakeSystemd({ output: `${entry}\n` });
    try {
      const { messages, end } = await collectStream(
        server,
        journalFollowStream,
        { name: "ssh", duration_ms: 15_000 },
        { env: fake.env },
      );
      expect(end).toBe("done");
      expect(messages).toEqual([
        {
          name: "ssh.service",
          line: "2024-04-24T06:30:15Z sshd[77]: Accepted publickey for ada",
          summary: "2024-04-24T06:30:15Z sshd[77]: Accepted publickey for ada",
        },
      ]);
      expect(await fake.runs()).toEqual([
        [
          "journalctl",
          "--unit=ssh.service",
          "--follow",
          "--lines=0",
          "--output=json",
          "--output-fields=MESSAGE,SYSLOG_IDENTIFIER,_COMM,_PID,SYSLOG_PID",
          "--no-pager",
          "--quiet",
        ],
      ]);
    } finally {
      await fake.cleanup();
    }
  });
});
