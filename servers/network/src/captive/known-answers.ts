/**
 * The answers the well-known connectivity-check URLs give on a free network, known by their path wherever
 * they are asked for (a portal intercepts any host, and a caller may point test_url at a mirror). A URL
 * whose answer is known turns "a 200 came back" into evidence either way.
 */

/** What a free network answers: a status, an exact body (after trailing whitespace), or both. */
export interface Expected {
  status?: number;
  body?: string;
}

const APPLE_SUCCESS = "<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>";

/** Path (lower case) → the answer, with who asks it. */
const KNOWN_ANSWERS: ReadonlyArray<{ path: string; expected: Expected; asker: string }> = [
  { path: "/generate_204", expected: { status: 204 }, asker: "Android, Chrome, ChromeOS" },
  { path: "/gen_204", expected: { status: 204 }, asker: "Google" },
  { path: "/hotspot-detect.html", expected: { status: 200, body: APPLE_SUCCESS }, asker: "Apple" },
  { path: "/library/test/success.html", expected: { status: 200, body: APPLE_SUCCESS }, asker: "Apple" },
  { path: "/connecttest.txt", expected: { status: 200, body: "Microsoft Connect Test" }, asker: "Windows NCSI" },
  { path: "/ncsi.txt", expected: { status: 200, body: "Microsoft NCSI" }, asker: "Windows NCSI (legacy)" },
  {
    path: "/check_network_status.txt",
    expected: { status: 200, body: "NetworkManager is online" },
    asker: "GNOME NetworkManager",
  },
  { path: "/success.txt", expected: { status: 200, body: "success" }, asker: "Firefox" },
  {
    path: "/canonical.html",
    expected: {
      status: 200,
      body: '<meta http-equiv="refresh" content="0;url=https://support.mozilla.org/kb/captive-portal"/>',
    },
    asker: "Firefox",
  },
];

/** The known answer of a URL, by its path, or undefined when nobody publishes one. */
export function knownAnswer(url: string): Expected | undefined {
  let path: string;
  try {
    path = new URL(url).pathname.toLowerCase();
  } catch {
    return undefined;
  }
  return KNOWN_ANSWERS.find((k) => k.path === path)?.expected;
}

/** A status, an exact body, or both; a body alone means a 200 with that body. */
export function expectation(status: number | undefined, body: string | undefined): Expected {
  return body === undefined ? { status: status ?? 200 } : { status: status ?? 200, body };
}

/** A configured probe's `expect` (a status or an exact body) as an Expected. */
export function expectedOf(expect: number | string): Expected {
  return typeof expect === "number" ? expectation(expect, undefined) : expectation(undefined, expect);
}

/** "status 204", "its expected text", "status 200 and its expected text". */
export function describeExpected(e: Expected): string {
  if (e.body !== undefined)
    return e.status !== undefined && e.status !== 200
      ? `status ${e.status} and its expected text`
      : "its expected text";
  return `status ${e.status}`;
}
