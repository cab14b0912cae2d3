/**
 * Regression (issue 18, finding 5): masking missed common forms (leaks counted by the red team: journal 11/20,
 * command lines 14/40, headers 5/20). Every sample of the shared corpus goes through every masker a server
 * shows text with: free text, a command line (as a string and as argv), a header value; none lets its secret
 * through. The non-secrets beside them come out exactly as they went in.
 */
import { PROXY_SAMPLES, READABLE_SAMPLES, SECRET_SAMPLES } from "@roadnerd/conventions/testing";
import { describe, expect, it } from "vitest";
import { maskArgv, maskCommandLine, maskHeaders, maskText, maskUrl } from "../src/runtime/mask.ts";

const maskers: Record<string, (text: string, command: boolean, argv?: readonly string[]) => string> = {
  maskText: (t) => maskText(t),
  maskCommandLine: (t) => maskCommandLine(t),
  // A command line's words are its argv; a line of text is one argument (logger "…", sh -c "…").
  maskArgv: (t, command) => maskArgv(command ? t.split(/\s+/) : ["logger", t]).join(" "),
  // The argv /proc shows when a word holds spaces (`lftp -e "open -u bob,PW h"`), as process_info reads it.
  "maskArgv (argv as /proc shows it)": (t, command, argv) =>
    argv ? maskArgv(argv).join(" ") : maskArgv(command ? t.split(/\s+/) : ["logger", t]).join(" "),
  "maskCommandLine (argv as /proc shows it)": (t, _command, argv) => maskCommandLine(argv ?? t),
  "maskHeaders (any header)": (t) => maskHeaders({ "x-note": t })["x-note"] ?? "",
};

describe("the secrets corpus through every masker", () => {
  for (const [name, mask] of Object.entries(maskers)) {
    it(`${name}: no secret of ${SECRET_SAMPLES.length} survives`, () => {
      const shown = (s: (typeof SECRET_SAMPLES)[number]) => mask(s.text, s.command === true, s.argv);
      const leaks = SECRET_SAMPLES.filter((s) => shown(s).includes(s.secret)).map((s) => `${s.form}: ${shown(s)}`);
      expect(leaks).toEqual([]);
    });
  }

  it("a proxy value's password is masked by the URL and text maskers too", () => {
    const leaks = PROXY_SAMPLES.filter(
      (s) => maskText(s.text).includes(s.secret) || maskUrl(s.text).includes(s.secret),
    );
    expect(leaks.map((s) => s.form)).toEqual([]);
  });

  it("non-secrets stay readable", () => {
    for (const [name, mask] of Object.entries(maskers)) {
      const changed = READABLE_SAMPLES.filter((t) => mask(t, true) !== t).map(
        (t) => `${name}: ${t} → ${mask(t, true)}`,
      );
      expect(changed).toEqual([]);
    }
    expect(maskUrl("https://status.example/report?code=302")).toBe("https://status.example/report?code=302");
    expect(maskUrl("https://app.example/cb?code=4/0AX4XfWh")).toBe("https://app.example/cb?code=%5Bmasked%5D");
  });
});

/**
 * Regression (attacker review): a header split over argv elements in other ways than whitespace shows
 * (`"Authorization: Bearer"` as one element, the token the next) let the token through maskArgv.
 */
describe("a credential split across argv elements", () => {
  it.each([
    [["curl", "-H", "Authorization: Bearer", "Tq8zSplitTok"]],
    [["curl", "-H", "Authorization:", "Bearer", "Tq8zSplitTok"]],
    [["curl", "-H", "Proxy-Authorization:", "Tq8zSplitTok"]],
    [["http", "https://api.example/", "Authorization:Basic", "Tq8zSplitTok"]],
  ])("%j", (argv) => {
    expect(maskArgv(argv).join(" ")).not.toContain("Tq8zSplitTok");
    expect(maskCommandLine(argv)).not.toContain("Tq8zSplitTok");
  });

  it("the scheme and the header's name stay readable", () => {
    expect(maskArgv(["curl", "-H", "Authorization: Bearer", "Tq8zSplitTok", "https://api.example/"])).toEqual([
      "curl",
      "-H",
      "Authorization: Bearer",
      "[masked]",
      "https://api.example/",
    ]);
  });
});
