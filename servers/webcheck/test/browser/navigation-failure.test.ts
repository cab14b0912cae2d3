/**
 * Regression (issue 18, finding 7): Chromium dying during a snapshot was answered E_CONN_REFUSED, as if the
 * target had refused a connection it was never asked for. The browser gone (its own words, as Playwright
 * reports them, or a closed page) is E_EXEC_FAILED; what the proxy saw a target do keeps its diagnosis.
 */
import { describe, expect, it } from "vitest";
import { navigationFailure } from "../../src/browser/snapshot-page.ts";

describe("navigationFailure", () => {
  it.each([
    "page.goto: Target page, context or browser has been closed",
    "page.goto: Page crashed",
    "page.goto: Browser has been closed.\nCall log:",
  ])("the browser gone (%s) is E_EXEC_FAILED", (message) => {
    expect(navigationFailure(new Error(message), undefined, false)).toMatchObject({ code: "E_EXEC_FAILED" });
  });

  it("a page found closed is E_EXEC_FAILED whatever the message", () => {
    expect(navigationFailure(new Error("net::ERR_ABORTED"), undefined, true)).toMatchObject({ code: "E_EXEC_FAILED" });
  });

  it("what the proxy saw keeps its diagnosis; an unexplained failure stays E_CONN_REFUSED", () => {
    const failed = { target: "192.0.2.1:80", code: "E_UNREACHABLE" as const, detail: "no route" };
    expect(navigationFailure(new Error("net::ERR_FAILED"), failed, false)).toMatchObject({ code: "E_UNREACHABLE" });
    expect(navigationFailure(new Error("net::ERR_FAILED"), undefined, false)).toMatchObject({ code: "E_CONN_REFUSED" });
  });
});
