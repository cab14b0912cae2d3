/** The proxy environment matrix: which proxy each client takes, and the disagreements we flag (table-driven). */
import { describe, expect, it } from "vitest";
import { clientViews, disagreements, type Env } from "../../src/env/client-rules.ts";

const P = "http://proxy.example:3128";
const Q = "http://other.example:8080";

type Row = {
  name: string;
  env: Env;
  /** client → [http, https, no_proxy] values (null: direct / none). */
  want: Record<string, [string | null, string | null, string | null]>;
  warn: RegExp[];
};

const rows: Row[] = [
  {
    name: "upper-case HTTP_PROXY alone is ignored by curl and wget",
    env: { HTTP_PROXY: P },
    want: { curl: [null, null, null], wget: [null, null, null], python: [P, null, null], undici: [P, P, null] },
    warn: [/HTTP_PROXY is set without http_proxy/, /no https_proxy: undici sends https through the http proxy/],
  },
  {
    name: "undici sends https through http_proxy when no https_proxy is set",
    env: { http_proxy: P },
    want: { curl: [P, null, null], wget: [P, null, null], python: [P, null, null], undici: [P, P, null] },
    warn: [/no https_proxy/],
  },
  {
    name: "an empty lower-case no_proxy hides NO_PROXY from undici and Python",
    env: { http_proxy: P, https_proxy: Q, no_proxy: "", NO_PROXY: "intranet.example" },
    want: {
      curl: [P, Q, "intranet.example"],
      wget: [P, Q, null],
      python: [P, Q, null],
      undici: [P, Q, null],
    },
    warn: [/no_proxy is set but empty/],
  },
  {
    name: "CIDR entries in NO_PROXY are honoured by curl and requests only",
    env: { http_proxy: P, https_proxy: P, no_proxy: "10.0.0.0/8,.example" },
    want: {
      curl: [P, P, "10.0.0.0/8,.example"],
      wget: [P, P, "10.0.0.0/8,.example"],
      python: [P, P, "10.0.0.0/8,.example"],
      undici: [P, P, "10.0.0.0/8,.example"],
    },
    warn: [/CIDR entries/],
  },
  {
    name: "lower case wins over upper case where both are read",
    env: { http_proxy: P, HTTP_PROXY: Q, https_proxy: P, HTTPS_PROXY: Q },
    want: { curl: [P, P, null], wget: [P, P, null], python: [P, P, null], undici: [P, P, null] },
    warn: [],
  },
  {
    name: "ALL_PROXY is a fallback for curl and Python only",
    env: { ALL_PROXY: P },
    want: { curl: [P, P, null], wget: [null, null, null], python: [P, P, null], undici: [null, null, null] },
    warn: [/ALL_PROXY is used only by curl and Python/],
  },
  {
    name: "an empty http_proxy hides HTTP_PROXY from undici and Python",
    env: { http_proxy: "", HTTP_PROXY: P, https_proxy: Q },
    want: { curl: [null, Q, null], wget: [null, Q, null], python: [null, Q, null], undici: [null, Q, null] },
    warn: [/http_proxy is set but empty/],
  },
  {
    name: "nothing set: everyone goes direct, nothing to warn about",
    env: { PATH: "/usr/bin" },
    want: {
      curl: [null, null, null],
      wget: [null, null, null],
      python: [null, null, null],
      undici: [null, null, null],
    },
    warn: [],
  },
];

describe("clientViews and disagreements", () => {
  it.each(rows)("$name", ({ env, want, warn }) => {
    const views = clientViews(env);
    const got = Object.fromEntries(
      views.map((v) => [v.client, [v.http?.value ?? null, v.https?.value ?? null, v.no_proxy?.value ?? null]]),
    );
    expect(got).toEqual(want);
    const warnings = disagreements(env, views);
    expect(warnings).toHaveLength(warn.length);
    for (const w of warn) expect(warnings.some((line) => w.test(line))).toBe(true);
  });

  it("says which variable each value came from", () => {
    const [curl, , python, undici] = clientViews({ HTTPS_PROXY: P, ALL_PROXY: Q });
    expect(curl?.https).toEqual({ value: P, from: "HTTPS_PROXY" });
    expect(curl?.http).toEqual({ value: Q, from: "ALL_PROXY" });
    expect(python?.http).toEqual({ value: Q, from: "ALL_PROXY" });
    expect(undici?.https).toEqual({ value: P, from: "HTTPS_PROXY" });
    expect(undici?.http).toBeNull();
  });
});
