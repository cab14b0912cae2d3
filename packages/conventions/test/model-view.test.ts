/** The model view's text: the verdict whole on the first line, fields bounded, `next` last, and cuts that spare the verdict. */
import { describe, expect, it } from "vitest";
import { cutView, renderView, VIEW_LIST_ITEMS, VIEW_VALUE_CHARS, viewLine } from "../src/define/model-view.ts";

describe("model view", () => {
  it("puts the summary first, the set fields as key=value, then next", () => {
    const text = renderView(
      {
        summary: "example.com A failed: TIMEOUT",
        next: { tool: "dns-config/dns_config_get", args: {}, why: "see which resolver is configured" },
      },
      { answers: [], resolver: "192.0.2.53", rcode: undefined, error: "E_DNS_FAIL", cached: null, ms: 12 },
    );
    expect(text).toBe(
      [
        "example.com A failed: TIMEOUT",
        "answers=none; resolver=192.0.2.53; error=E_DNS_FAIL; cached=none; ms=12",
        "next: dns-config/dns_config_get {} (see which resolver is configured)",
      ].join("\n"),
    );
  });

  it("cuts long values and long lists, saying how many were left out", () => {
    const line = viewLine({ s: "x".repeat(500), list: Array.from({ length: 12 }, (_, i) => `item${i}`) });
    const [s, list] = line.split("; ");
    expect(s?.length).toBe(VIEW_VALUE_CHARS + 2);
    expect(list).toBe(`list=item0, item1, item2, item3, item4 (+${12 - VIEW_LIST_ITEMS} more)`);
  });

  it("a profile's cut never reaches the verdict line", () => {
    const summary = `captive portal suspected: ${"evidence ".repeat(12)}`.trim();
    const view = renderView({ summary }, { redirects: Array.from({ length: 5 }, () => "302 login.example".repeat(3)) });
    const cut = cutView(view, 200);
    expect(cut.startsWith(`${summary}\n`)).toBe(true);
    expect(cut.length).toBe(200);
    // Less room than the verdict itself: the verdict alone, whole.
    expect(cutView(view, 20)).toBe(summary);
    expect(cutView(view, 10_000)).toBe(view);
  });
});
