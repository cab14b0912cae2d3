/**
 * snapshot: a page as a user would see it in a browser — where it ended up, its status and title, and a PNG of
 * it saved in the artifacts directory (a path, not base64). `ping` while it loads, one `message`, `end`; `error`
 * when it is refused, does not load in time, or the bound of concurrent snapshots is reached (E_BUSY).
 */
import { DiagError, httpUrlField, maskUrl, portOf, type StreamContext } from "@roadnerd/conventions";
import { z } from "zod";
import { pngSize } from "../artifacts/png.ts";
import { saveArtifact } from "../artifacts/store.ts";
import { chromiumVersion } from "../browser/launch.ts";
import { snapshotPage } from "../browser/snapshot-page.ts";
import { warmBrowser } from "../browser/warm-browser.ts";
import { defineStream } from "../kit.ts";
import { tlsInfo } from "../tools/tls-info.ts";

/** tls_info's verdict on the https page the browser ended on (or was sent to), or null for http. */
async function certificateOf(
  finalUrl: string,
  askedUrl: string,
  ctx: Pick<StreamContext, "call">,
): Promise<{ trusted: boolean; problem: string | null } | null> {
  const url = [finalUrl, askedUrl].find((u) => u.startsWith("https://"));
  if (!url) return null;
  try {
    const r = await ctx.call(tlsInfo, { url });
    const problem = [r.chain_error, r.name_ok ? null : "wrong name"].filter(Boolean).join(", ");
    return { trusted: r.trusted, problem: r.trusted ? null : problem || "not trusted" };
  } catch (err) {
    return { trusted: false, problem: `could not be checked: ${(err as Error).message}`.slice(0, 200) };
  }
}

/** The kernel's default stream duration: the whole snapshot, launch included, must fit in it. */
const DEFAULT_DURATION_MS = 10_000;
/** Kept back from the duration for the screenshot and saving it. */
const SHOT_RESERVE_MS = 1_500;
export const DEFAULT_LOAD_TIMEOUT_MS = 8_000;

export const snapshot = defineStream({
  name: "snapshot",
  summary: "Load a URL in headless Chromium: final URL, status, title and a PNG screenshot saved to a file.",
  openWorld: true,
  shared: false,
  targets: { url: "url" },
  commands: [chromiumVersion],
  input: {
    url: httpUrlField.describe("http:// or https:// URL to load, e.g. http://192.0.2.1/ (a router's page)"),
    width: z.coerce.number().int().min(320).max(1920).optional().describe("viewport width in px (default 1280)"),
    height: z.coerce.number().int().min(240).max(1600).optional().describe("viewport height in px (default 800)"),
    timeout_ms: z.coerce
      .number()
      .int()
      .min(500)
      .max(60_000)
      .optional()
      .describe(`page load deadline in ms (default ${DEFAULT_LOAD_TIMEOUT_MS}, within duration_ms)`),
  },
  message: {
    url: z.string().describe("the URL asked for (secrets masked)"),
    final_url: z.string().describe("where the page ended up after redirects"),
    status: z.number().int().nullable().describe("HTTP status of the page"),
    title: z.string().describe("the page's <title>"),
    screenshot: z
      .object({
        path: z.string().describe("PNG file in WEBCHECK_ARTIFACTS_DIR"),
        width: z.number().int().describe("px"),
        height: z.number().int().describe("px"),
        bytes: z.number().int().describe("file size"),
      })
      .describe("the screenshot file"),
    blocked: z.array(z.string()).describe("targets the page tried that the allowlist refused (first 10)"),
    blocked_count: z.number().int().describe("how many requests were refused in all"),
    failed: z
      .array(z.object({ target: z.string(), code: z.string().describe("E_DNS_FAIL, E_CONN_REFUSED…") }))
      .describe("allowed requests of the page that failed: a name that does not resolve, a refused port (first 10)"),
    certificate: z
      .object({
        trusted: z.boolean().describe("what a browser requires: the chain verifies and names the host"),
        problem: z
          .string()
          .nullable()
          .describe("why not (self-signed, expired, wrong name…): a browser shows a warning"),
      })
      .nullable()
      .describe(
        "for an https page: its certificate as a browser judges it (the screenshot is taken past it); null for http",
      ),
    browser: z
      .object({ version: z.string(), cold: z.boolean().describe("this snapshot launched the browser") })
      .describe("the browser used"),
    timing_ms: z
      .object({
        launch: z.number().min(0).describe("browser start (0 when warm)"),
        load: z.number().min(0).describe("navigation until the load event"),
        screenshot: z.number().min(0),
        total: z.number().min(0),
      })
      .describe("phases in ms"),
  },
  example: { url: "https://example.com/" },
  summarize: (m) =>
    (m.certificate && !m.certificate.trusted
      ? `CERTIFICATE NOT TRUSTED (${m.certificate.problem}), a browser warns first; `
      : "") +
    `${m.final_url} → ${m.status ?? "-"} "${m.title}"` +
    (m.blocked_count > 0 ? `; ${m.blocked_count} request(s) outside the allowlist refused` : "") +
    `; screenshot ${m.screenshot.width}x${m.screenshot.height} ${m.screenshot.path}`,
  async run(input, ctx) {
    const started = performance.now();
    // Refused (or not resolving) before any browser starts; the proxy checks every request again.
    const target = new URL(input.url);
    await ctx.outbound.resolveTarget(target.hostname, ctx.signal, portOf(target));
    const duration = input.duration_ms ?? DEFAULT_DURATION_MS;
    const browser = ctx.use(warmBrowser);
    const lease = await browser.lease(async () => {
      // The declared binary, through the kernel's exec: E_NO_BINARY naming it before anything is launched.
      // The stream's time, not a tool's 2 s: the first run of Debian's wrapper script and binary reads ~200 MB
      // from disk, which took longer than that on a loaded machine (CI, stop 36).
      const r = await ctx.exec(chromiumVersion, undefined, {
        timeoutMs: Math.max(1, Math.round(duration - (performance.now() - started))),
      });
      if (r.exitCode !== 0)
        throw new DiagError("E_EXEC_FAILED", `${chromiumVersion.binary} --version exited ${r.exitCode}`);
    });
    try {
      const left = duration - (performance.now() - started);
      const loadTimeoutMs = Math.max(
        200,
        Math.min(input.timeout_ms ?? DEFAULT_LOAD_TIMEOUT_MS, left - SHOT_RESERVE_MS),
      );
      const shot = await snapshotPage(
        lease.browser,
        ctx.outbound,
        { url: input.url, width: input.width ?? 1280, height: input.height ?? 800, loadTimeoutMs, budgetMs: left },
        ctx.signal,
      );
      const size = pngSize(shot.png);
      if (!size) throw new DiagError("E_INTERNAL", "the browser returned something that is not a PNG");
      const saved = await saveArtifact(
        {
          dir: ctx.config.WEBCHECK_ARTIFACTS_DIR,
          maxFiles: ctx.config.WEBCHECK_MAX_ARTIFACTS,
          maxBytes: ctx.config.WEBCHECK_MAX_ARTIFACTS_MB * 1024 * 1024,
        },
        shot.png,
      );
      // The browser looks past a bad certificate (the page is the evidence); a person would see a warning first.
      const certificate = await certificateOf(shot.finalUrl, input.url, ctx);
      await ctx.emit({
        url: maskUrl(input.url),
        final_url: shot.finalUrl,
        status: shot.status,
        title: shot.title,
        screenshot: { path: saved.path, width: size.width, height: size.height, bytes: saved.bytes },
        blocked: shot.refusals.slice(0, 10).map((r) => r.target),
        blocked_count: shot.refusedCount,
        failed: shot.failures.slice(0, 10).map((f) => ({ target: f.target, code: f.code })),
        certificate,
        browser: { version: lease.browser.version(), cold: lease.cold },
        timing_ms: {
          launch: lease.cold ? lease.launchMs : 0,
          load: shot.loadMs,
          screenshot: shot.shotMs,
          total: Math.round(performance.now() - started),
        },
      });
    } finally {
      lease.release();
    }
  },
});
