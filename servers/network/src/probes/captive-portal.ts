/**
 * The captive_portal prober (ours): captive_portal_check on the target as its test URL, so the verdict is the
 * tool's (redirects, login pages, the OS rules, CAPPORT). Success: no portal suspected and the test URL gave the
 * answer a free network gives. Series: the verdict, each OS's rule, and the test URL's status.
 */
import { defineProber, type ProbeSeries } from "@roadnerd/conventions";
import { z } from "zod";
import { captivePortalCheck } from "../tools/captive-portal-check.ts";

const options = z.strictObject({
  expect_status: z.number().int().min(200).max(599).optional(),
  expect_body: z.string().min(1).max(512).optional(),
});

/** A bare host is probed over plain HTTP, where a portal can intercept it. */
const urlOf = (target: string) => (/^https?:\/\//i.test(target) ? target : `http://${target}`);

export const captivePortalProber = defineProber({
  name: "captive_portal",
  options,
  defaults: { captive_portal: {} },
  async run(target, o, ctx) {
    const r = await ctx.call(captivePortalCheck, { test_url: urlOf(target), ...o });
    const series: ProbeSeries[] = [
      {
        name: "roadnerd_probe_captive_portal_suspected",
        help: "A captive portal is likely (1), as captive_portal_check judges",
        value: r.suspected ? 1 : 0,
      },
      { name: "probe_http_status_code", help: "Response HTTP status code", value: r.status ?? 0 },
      ...Object.entries(r.verdicts).map(([os, verdict]) => ({
        name: "roadnerd_probe_captive_verdict",
        help: "What each OS's rule concludes (1 on its verdict)",
        value: 1,
        labels: { os, verdict },
      })),
    ];
    if (r.error) {
      series.push({
        name: "roadnerd_probe_failed",
        help: "Where the probe failed (1), by phase and diagnosis code",
        value: 1,
        labels: { phase: "request", code: r.error },
      });
    }
    return { success: !r.suspected && r.test_matched !== false && r.error === undefined, series };
  },
});
