import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { journalLine } from "../../src/parse/journal-json.ts";

const lines = (p: string) =>
  readFileSync(join(import.meta.dirname, "../fixtures", p), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => journalLine(l));

describe("journalLine", () => {
  it("252 (recorded): systemd's lines about a failed unit", () => {
    expect(lines("systemd-252/journal-rn-broken.jsonl")).toEqual([
      "2026-11-22T09:53:12Z systemd[1]: Starting rn-broken.service - RoadNerd broken...",
      "2026-11-22T09:53:12Z systemd[1]: rn-broken.service: Main process exited, code=exited, status=1/FAILURE",
      "2026-11-22T09:53:12Z systemd[1]: rn-broken.service: Failed with result 'exit-code'.",
      "2026-11-22T09:53:12Z systemd[1]: Failed to start rn-broken.service - RoadNerd broken.",
    ]);
  });

  it("247: a daemon's own error line", () => {
    expect(lines("systemd-247/journal-nginx.jsonl")).toEqual([
      "2021-05-25T08:14:02Z nginx[433]: nginx: [emerg] bind() to 0.0.0.0:80 failed (98: Address already in use)",
      "2021-05-25T08:14:03Z systemd[1]: nginx.service: Failed with result 'exit-code'.",
    ]);
  });

  it("255: bytes that are not UTF-8, a message left out, multi-line with a bearer token, _COMM when no identifier", () => {
    expect(lines("systemd-255/journal-NetworkManager.jsonl")).toEqual([
      "2024-04-24T06:30:12Z NetworkManager[812]: <info>  [1713940212.0000] device (wlp3s0): state change: config -> ip-config",
      "2024-04-24T06:30:13Z NetworkManager[812]: <warn> bad \ufffd byte",
      "2024-04-24T06:30:14Z NetworkManager[812]: [message over 4 KiB, left out by journalctl]",
      "2024-04-24T06:30:15Z nm-dispatcher[901]: req:1 'up' [wlp3s0]: Authorization: Bearer [masked] ⏎ second line",
    ]);
  });

  it("cuts long lines and skips what is not an entry", () => {
    const long = JSON.stringify({ __REALTIME_TIMESTAMP: "0", SYSLOG_IDENTIFIER: "x", MESSAGE: "y".repeat(1000) });
    expect(journalLine(long, 50)).toBe(`1970-01-01T00:00:00Z x: ${"y".repeat(25)}…`);
    expect(journalLine("not json")).toBeUndefined();
    expect(journalLine("[1,2]")).toBeUndefined();
    expect(journalLine("null")).toBeUndefined();
  });
});
