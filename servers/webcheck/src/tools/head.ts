/**
 * head: one HEAD request, the way a browser's first hop sees it — status, masked headers, where a redirect
 * points (not followed by default), timings per phase. Through the kernel's checked, pinned probe; a refused
 * port, a dead name or a deadline is a 200 with `error` set.
 */
import {
  DIAGNOSIS_CODES,
  httpProbe,
  httpUrlField,
  limitInput,
  probeAnswer,
  shownUrl,
  timingMsField,
  truncationFields,
} from "@roadnerd/conventions";
import { z } from "zod";
import { defineTool } from "../kit.ts";

export const head = defineTool({
  name: "head",
  summary: "HEAD a URL: status, headers, Location, timings; redirects not followed.",
  openWorld: true,
  targets: { url: "url" },
  input: {
    url: httpUrlField.describe("http:// or https:// URL, e.g. https://intranet.example/"),
    follow: z.boolean().optional().describe("follow redirects, at most 5, each hop checked (default false)"),
    limit: limitInput,
  },
  output: {
    url: z.string().describe("the URL asked for (secrets masked)"),
    status: z.number().int().nullable().describe("HTTP status of the last response, null if none"),
    location: z.string().nullable().describe("the Location header of a redirect, resolved (null if none)"),
    final_url: z.string().optional().describe("URL of the last response, when redirects were followed"),
    headers: z.record(z.string(), z.string()).describe("response headers, secrets masked"),
    ...truncationFields,
    timing_ms: timingMsField.describe("phases of the last request"),
    error: z.enum(DIAGNOSIS_CODES).optional().describe("diagnosis when there was no answer"),
    detail: z.string().optional().describe("what failed and where"),
  },
  example: { url: "https://example.com/" },
  view: (r) => ({ status: r.status, location: r.location, error: r.error }),
  summarize: (r) => {
    if (r.error) return `${r.url} → ${r.error}: ${r.detail ?? ""}`;
    const to = r.location ? ` → ${r.location}` : "";
    return `${r.url} → ${r.status}${to} in ${r.timing_ms.total} ms`;
  },
  async handler(input, ctx) {
    const result = await httpProbe(ctx.outbound, input.url, {
      method: "HEAD",
      followRedirects: input.follow ?? false,
      signal: ctx.signal,
      timeoutMs: ctx.budget(),
    });
    const last = result.final;
    const location = last?.redirectUrl ?? last?.location ?? null;
    const { url, status, final_url, ...rest } = probeAnswer(result, input.url, input.limit);
    return {
      url,
      status,
      location: location === null ? null : shownUrl(location),
      ...(final_url ? { final_url } : {}),
      ...rest,
    };
  },
});
