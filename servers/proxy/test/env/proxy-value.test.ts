import { PROXY_SAMPLES } from "@roadnerd/conventions/testing";
import { describe, expect, it } from "vitest";
import { maskProxyValue, parseProxyValue } from "../../src/env/proxy-value.ts";

describe("maskProxyValue", () => {
  it.each([
    ["alice:s3cret@proxy.corp:3128", "[masked]@proxy.corp:3128"],
    ["http://alice:s3cret@proxy.corp:3128", "http://[masked]@proxy.corp:3128"],
    ["http://alice:s3cret@proxy.corp:3128/", "http://[masked]@proxy.corp:3128/"],
    ["https://alice@proxy.corp", "https://[masked]@proxy.corp"],
    ["socks5://a%40b:p%3Aw@[2001:db8::1]:1080", "socks5://[masked]@[2001:db8::1]:1080"],
    ["http://us@er:p@ss@proxy.corp:3128", "http://[masked]@proxy.corp:3128"],
    ["http://proxy.corp:3128/?token=abc", "http://proxy.corp:3128/?token=[masked]"],
    ["proxy.corp:3128", "proxy.corp:3128"],
    ["", ""],
  ])("%s → %s", (raw, masked) => {
    expect(maskProxyValue(raw)).toBe(masked);
    expect(maskProxyValue(raw)).not.toContain("s3cret");
  });
});

describe("parseProxyValue", () => {
  it("keeps a percent-escape that does not decode as written, instead of failing", () => {
    expect(parseProxyValue("http://alice:s3cret%PW@127.0.0.1:3128")).toMatchObject({
      host: "127.0.0.1",
      username: "alice",
      password: "s3cret%PW",
    });
  });

  it("reads a value without a scheme as http://, credentials and all", () => {
    expect(parseProxyValue("alice:s3cret@proxy.corp:3128")).toEqual({
      scheme: "http",
      host: "proxy.corp",
      port: 3128,
      credentials: true,
      username: "alice",
      password: "s3cret",
    });
  });
  it("knows default ports and IPv6 literals", () => {
    expect(parseProxyValue("https://proxy.corp")).toMatchObject({ scheme: "https", port: 443, credentials: false });
    expect(parseProxyValue("http://[::1]:8080")).toMatchObject({ host: "::1", port: 8080 });
    expect(parseProxyValue("http://p:8080")).toMatchObject({ host: "p", port: 8080 });
  });
  it("refuses what is not an address", () => {
    expect(parseProxyValue("")).toBeNull();
    expect(parseProxyValue("http://")).toBeNull();
    expect(parseProxyValue("http://a b:1")).toBeNull();
  });
});

describe("regression (issue 18): the shared corpus of proxy values", () => {
  it("no password survives maskProxyValue, # and / in it included", () => {
    const leaks = PROXY_SAMPLES.filter((s) => maskProxyValue(s.text).includes(s.secret)).map(
      (s) => `${s.form}: ${maskProxyValue(s.text)}`,
    );
    expect(leaks).toEqual([]);
    expect(maskProxyValue("http://alice:Px/4pass@proxy.corp:3128/")).toBe("http://[masked]@proxy.corp:3128/");
  });
});
