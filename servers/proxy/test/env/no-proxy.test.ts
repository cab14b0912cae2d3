/** NO_PROXY matching as undici does it (the rule proxy_connectivity_test follows for the env's proxy). */
import { describe, expect, it } from "vitest";
import { noProxyMatches } from "../../src/env/no-proxy.ts";

describe("noProxyMatches", () => {
  it.each([
    ["*", "anything.example", 80, true],
    ["intranet.example", "intranet.example", 80, true],
    ["intranet.example", "www.intranet.example", 443, true],
    [".intranet.example", "www.intranet.example", 443, true],
    ["*.intranet.example", "www.intranet.example", 443, true],
    ["intranet.example", "notintranet.example", 80, false],
    ["intranet.example:8080", "intranet.example", 8080, true],
    ["intranet.example:8080", "intranet.example", 80, false],
    ["localhost, 127.0.0.1", "127.0.0.1", 80, true],
    ["10.0.0.0/8", "10.1.2.3", 80, false],
    ["[::1]:8080", "::1", 8080, true],
    ["", "intranet.example", 80, false],
  ])("%j matches %s:%d → %s", (list, host, port, expected) => {
    expect(noProxyMatches(list, host, port)).toBe(expected);
  });
});
