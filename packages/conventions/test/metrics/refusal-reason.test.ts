/** Every refusal of the real policy gets its own reason label, none falls to `other`. */
import { describe, expect, it } from "vitest";
import { DiagError } from "../../src/errors/errors.ts";
import { refusalReason } from "../../src/metrics/refusal-reason.ts";
import { createOutboundPolicy } from "../../src/outbound/index.ts";
import { thrown } from "../../src/testing/thrown.ts";

function reasonOf(fn: () => void): string {
  const err = thrown(fn);
  if (!(err instanceof DiagError) || err.code !== "E_FORBIDDEN") throw new Error(`not a refusal: ${String(err)}`);
  return refusalReason(err);
}

describe("refusalReason", () => {
  it("names each of the policy's refusals", () => {
    const open = createOutboundPolicy({ allow: [], deny: ["192.0.2.0/24", "bad.example"] });
    expect(reasonOf(() => open.checkTarget("169.254.169.254"))).toBe("default_deny");
    expect(reasonOf(() => open.checkTarget("metadata.google.internal"))).toBe("metadata");
    expect(reasonOf(() => open.checkTarget("192.0.2.7"))).toBe("denied");
    expect(reasonOf(() => open.checkTarget("bad.example"))).toBe("denied");
    open.setSelf("127.0.0.1", 7101);
    expect(reasonOf(() => open.checkTarget("127.0.0.1", 7101))).toBe("self");
    // A sibling's port (7105, proxy) on this machine: the probe said "other" before (stop 27's new-user review).
    expect(reasonOf(() => open.checkTarget("127.0.0.1", 7105))).toBe("roadnerd_port");
    const listed = createOutboundPolicy({ allow: ["198.51.100.1"], deny: [] });
    expect(reasonOf(() => listed.checkTarget("198.51.100.2"))).toBe("not_allowed");
    const only = createOutboundPolicy({ allow: [], deny: [], allowlistOnly: "proxy" });
    expect(reasonOf(() => only.checkTarget("198.51.100.2"))).toBe("allowlist_only");
  });

  it("falls back to other for a message it does not know", () => {
    expect(refusalReason(new DiagError("E_FORBIDDEN", "something new"))).toBe("other");
  });
});
