/**
 * captive_portal_check's env: probes with a known answer, an RFC 8908 CAPPORT API URL, the default test URL.
 * `captiveEnv` is part of the server's env (config.ts), so the kernel validates and defaults it once at
 * start-up and a bad value stops the server instead of failing the first call.
 */
import { httpUrlField } from "@roadnerd/conventions";
import { z } from "zod";

/** The spec's default: a plain-HTTP site, so a portal can intercept it. */
export const DEFAULT_TEST_URL = "http://neverssl.com";
export const MAX_CAPTIVE_PROBES = 6;

/** What the operating systems themselves ask, unless CAPTIVE_PROBES says otherwise. */
export const DEFAULT_CAPTIVE_PROBES: readonly CaptiveProbe[] = [
  { url: "http://connectivitycheck.gstatic.com/generate_204", expect: 204 },
  { url: "http://nmcheck.gnome.org/check_network_status.txt", expect: "NetworkManager is online" },
];

export const captiveProbeSchema = z.strictObject({
  url: httpUrlField.describe("URL to probe"),
  expect: z
    .union([z.number().int().min(200).max(599), z.string().min(1).max(512)])
    .describe("the answer a free network gives: a status (204) or the exact body text"),
});

export type CaptiveProbe = z.output<typeof captiveProbeSchema>;

const probesJson = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: "custom", message: 'expected JSON like [{"url":"http://host/generate_204","expect":204}]' });
      return z.NEVER;
    }
  })
  .pipe(z.array(captiveProbeSchema).min(1).max(MAX_CAPTIVE_PROBES));

export const captiveEnv = {
  CAPTIVE_PROBES: probesJson
    .default([...DEFAULT_CAPTIVE_PROBES])
    .describe('JSON list of probes: [{"url":"http://…/generate_204","expect":204},{"url":"…","expect":"exact body"}]'),
  CAPPORT_URL: httpUrlField.optional().describe("RFC 8908 CAPPORT API URL (https) when DHCP option 114 is known"),
  CAPTIVE_TEST_URL: httpUrlField.default(DEFAULT_TEST_URL).describe(`default test_url (default ${DEFAULT_TEST_URL})`),
};
