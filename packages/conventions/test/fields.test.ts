import { isIP } from "node:net";
import { describe, expect, it } from "vitest";
import { config } from "zod";
import { ipFamily } from "../src/define/fields.ts";
import { hostField, ipField } from "../src/index.ts";

const CORPUS = [
  "127.0.0.1",
  "0.0.0.0",
  "255.255.255.255",
  "256.1.1.1",
  "1.2.3",
  "01.2.3.4",
  "::1",
  "::",
  "fe80::1%eth0",
  "::ffff:127.0.0.1",
  "2001:db8::",
  "2001:db8:::1",
  "[::1]",
  "1:2:3:4:5:6:7:8",
  "1:2:3:4:5:6:7:8:9",
  "example.com",
  "localhost",
  "a:b",
  ":",
  "",
  " 127.0.0.1",
  "127.0.0.1 ",
];

describe("ipFamily", () => {
  it("answers what net.isIP answers", () => {
    for (const value of CORPUS) expect(ipFamily(value), JSON.stringify(value)).toBe(isIP(value));
  });

  it("is what the address fields check", () => {
    expect(ipField.safeParse("::1").success).toBe(true);
    expect(ipField.safeParse("example.com").success).toBe(false);
    expect(hostField.safeParse("example.com").success).toBe(true);
    expect(hostField.safeParse("fe80::1%eth0").success).toBe(true);
    expect(hostField.safeParse("-x").success).toBe(false);
  });
});

describe("zod", () => {
  it("parses without compiling code from strings once the kernel is imported (ADR 0063)", () => {
    expect(config().jitless).toBe(true);
  });
});
