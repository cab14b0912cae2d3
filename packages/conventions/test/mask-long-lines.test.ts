/**
 * Regression (found while adding stop 26's rows): masking took time quadratic in a line's length for lines
 * anyone can write — a journal message (`logger`) or a process's argv (shown by process_info, who_uses_port,
 * port_watch). 40 KB of `mysql ` took 9 s in maskText, 8,000 argv words `lftp` 5 s in maskArgv (16,000: 4×
 * that), 40-80 KB of `a;`, `a://` or `a-` 1-14 s (a user part, a password, a secret's name, a program's words
 * read to the end of the line from every start). Now each start reads a bounded window: the same lines take milliseconds to a few
 * hundred. Deadlines scale with the machine's load (testkit's scaledMs); the quadratic code missed them.
 */
import { scaledMs } from "@roadnerd/testkit";
import { describe, expect, it } from "vitest";
import { MASK, maskArgv, maskText } from "../src/runtime/mask.ts";

function timed(work: () => unknown): number {
  const start = performance.now();
  work();
  return performance.now() - start;
}

describe("a long line costs linear time", () => {
  it.each([
    ["a user part from every start (`a;`)", "'".concat("a;".repeat(40_000)), 1000],
    ["a password from every start (`x;b:`)", "x;b:".repeat(20_000), 1000],
    ["URL userinfo from every scheme (`a://`)", "a://".repeat(20_000), 1000],
    ["a secret's name from every word (`a-`)", "a-".repeat(20_000), 1000],
    ["a secret's name from every word (`sk-`)", "sk-".repeat(13_000), 1000],
    ["a ruled program's words from every name (`mysql `)", "mysql ".repeat(7_000), 1500],
    ["a ruled program with a script option (`lftp -e '`)", "lftp -e '".repeat(4_000), 1500],
  ])("maskText: %s", (_label, line, budget) => {
    expect(timed(() => maskText(line))).toBeLessThan(scaledMs(budget));
  });

  it.each([["mysql"], ["lftp"]])("maskArgv: 16,000 words `%s`", (word) => {
    const argv = ["x", ...Array.from({ length: 16_000 }, () => word)];
    expect(timed(() => maskArgv(argv))).toBeLessThan(scaledMs(1500));
  });

  it("still masks a secret after the window's first program (each program gets its own window)", () => {
    const line = `${"mysql ".repeat(100)}mysql -uroot -pLong9Pw app`;
    expect(maskText(line)).toContain(`-p${MASK} app`);
    expect(maskArgv(line.split(" ")).join(" ")).toContain(`-p${MASK} app`);
  });
});
