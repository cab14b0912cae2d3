/**
 * Regression (issue 18, finding 7): the codes of an `ip` run gone wrong. Output the kernel's exec cut at its
 * cap (it kills the program: exit -1) was E_UNSUPPORTED, output that is not iproute2's JSON was E_INTERNAL
 * (a bug of ours); both are the program's answer failing, E_EXEC_FAILED, and a real non-zero exit stays
 * E_UNSUPPORTED.
 */
import { describe, expect, it } from "vitest";
import { parseIpJson } from "../../src/parse/ip-result.ts";

const run = (over: Partial<{ stdout: string; stderr: string; exitCode: number; truncated: boolean }>) => ({
  stdout: "",
  stderr: "",
  exitCode: 0,
  truncated: false,
  durationMs: 1,
  ...over,
});
const parse = (json: string) => JSON.parse(json) as unknown;

describe("parseIpJson", () => {
  it("output over the cap is E_EXEC_FAILED, not E_UNSUPPORTED", () => {
    expect(() => parseIpJson(run({ stdout: '[{"ifname":', exitCode: -1, truncated: true }), "ip addr", parse)).toThrow(
      expect.objectContaining({ code: "E_EXEC_FAILED", message: expect.stringContaining("output cap") }),
    );
  });

  it("output that is not JSON is E_EXEC_FAILED, not E_INTERNAL", () => {
    expect(() => parseIpJson(run({ stdout: "1: lo: <LOOPBACK,UP>" }), "ip addr", parse)).toThrow(
      expect.objectContaining({ code: "E_EXEC_FAILED" }),
    );
  });

  it("a non-zero exit stays E_UNSUPPORTED, and good JSON is parsed", () => {
    expect(() => parseIpJson(run({ exitCode: 1, stderr: "Error: unknown" }), "ip -6 route", parse)).toThrow(
      expect.objectContaining({ code: "E_UNSUPPORTED" }),
    );
    expect(parseIpJson(run({ stdout: "[]" }), "ip addr", parse)).toEqual([]);
  });
});
