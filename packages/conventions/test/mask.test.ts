/** What we echo never carries a secret: headers by name or by value, URLs, free text. */
import { describe, expect, it } from "vitest";
import { MASK, maskHeaders, maskText, maskUrl } from "../src/runtime/mask.ts";

const JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";

describe("maskHeaders", () => {
  it("masks a header whose name says it is a secret, wherever the word sits", () => {
    const out = maskHeaders({
      authorization: "Bearer abc",
      "x-session-id": "s-123",
      "x-goog-api-key": "k",
      "x-csrftoken": "c",
      "set-cookie": "a=b",
      "x-amz-security-token": "t",
      "x-request-sig": "zzz",
      "content-type": "text/html",
    });
    for (const name of [
      "authorization",
      "x-session-id",
      "x-goog-api-key",
      "x-csrftoken",
      "set-cookie",
      "x-request-sig",
    ]) {
      expect(out[name], name).toBe(MASK);
    }
    expect(out["content-type"]).toBe("text/html");
  });

  it("masks a secret inside any other header's value", () => {
    const out = maskHeaders({
      link: "<https://x.example/?access_token=abc>; rel=next",
      "x-debug": "user=alice token=s3cr3t; mode=full",
      "x-forwarded-auth": "Basic YWxhZGRpbjpvcGVu",
      "x-trace": `carrier ${JWT}`,
      "www-authenticate": 'Bearer realm="api"',
    });
    expect(out.link).not.toContain("abc");
    expect(out["x-debug"]).toBe(`user=alice token=${MASK}; mode=full`);
    expect(out["x-forwarded-auth"]).toBe(MASK);
    expect(out["x-trace"]).toBe(`carrier ${MASK}`);
    expect(out["x-trace"]).not.toContain("eyJ");
    expect(out["www-authenticate"]).toBe('Bearer realm="api"');
  });
});

describe("maskText and maskUrl", () => {
  it("masks credentials in text and URLs, keeps the rest", () => {
    expect(maskText("curl -H 'Authorization: Bearer abc.def' ?api_key=123&x=1")).toBe(
      `curl -H 'Authorization: Bearer ${MASK}' ?api_key=${MASK}&x=1`,
    );
    expect(maskUrl("https://u:p@host.example/p?code=4/0AX4Xf&q=2#access_token=z")).toBe(
      `https://${encodeURIComponent(MASK)}:${encodeURIComponent(MASK)}@host.example/p?code=${encodeURIComponent(MASK)}&q=2#${MASK}`,
    );
  });
});
