import type { HopResponse } from "@roadnerd/conventions";
import { describe, expect, it } from "vitest";
import { pageEvidence } from "../../src/captive/page-evidence.ts";

const page = (body: string, url = "http://site.example/"): HopResponse => ({
  url,
  address: "192.0.2.1",
  port: 80,
  status: 200,
  headers: {},
  redirectUrl: null,
  location: null,
  body,
  bodyBytes: body.length,
  bodyComplete: true,
  timing: { dns: 0, connect: 0, tls: 0, ttfb: 0, total: 0 },
  tls: null,
});

describe("pageEvidence", () => {
  it("finds login and terms forms, not search boxes", () => {
    expect(pageEvidence(page('<form action="/l"><input type="password" name="p"></form>'))?.kind).toBe("login_form");
    expect(
      pageEvidence(page("<form method=post>Room number <input name=r><button>Connect</button></form>"))?.kind,
    ).toBe("login_form");
    expect(pageEvidence(page('<form action="/search"><input name="q"><button>Go</button></form>'))).toBeUndefined();
  });

  it("finds a meta refresh or a script redirect to another site, never to the page's own", () => {
    const meta = pageEvidence(page('<meta http-equiv="Refresh" content="0; URL=http://portal.example/login?t=1">'));
    expect(meta).toMatchObject({ kind: "meta_refresh", says: "a meta refresh to portal.example" });
    expect(pageEvidence(page('<meta http-equiv="refresh" content="5; url=/next">'))).toBeUndefined();
    expect(pageEvidence(page('<meta http-equiv="refresh" content="0;url=http://www.site.example/">'))).toBeUndefined();
    for (const script of [
      'window.location.href = "http://portal.example/"',
      "location.replace('http://portal.example/x')",
      'top.location="http://portal.example"',
    ]) {
      expect(pageEvidence(page(`<script>${script}</script>`))?.kind, script).toBe("script_redirect");
    }
    expect(pageEvidence(page('<script>location.href = "/local"</script>'))).toBeUndefined();
  });

  it("masks secrets in the target it reports", () => {
    const e = pageEvidence(page('<meta http-equiv="refresh" content="0;url=http://portal.example/?token=abc">'));
    expect(e?.target).not.toContain("abc");
  });
});
