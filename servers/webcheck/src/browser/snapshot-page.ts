/**
 * One snapshot in a warm browser: a fresh context (no cookies or cache from the last one) whose every request
 * goes through its own policy-checked proxy, the page loaded, its title read, a PNG of the viewport taken.
 * The first navigation ending anywhere the policy refuses, or not loading in time, is an error; what the
 * page's subresources tried and were refused is reported beside the screenshot.
 */
import {
  DiagError,
  type DiagnosisCode,
  HOP_HEADERS,
  maskUrl,
  type OutboundPolicy,
  oneLine,
} from "@roadnerd/conventions";
import type { Browser, Response } from "playwright-core";
import { BLOCKED_HEADER, FAILED_HEADER, type Refusal, startFilterProxy, type UpstreamFailure } from "./filter-proxy.ts";

export interface PageRequest {
  url: string;
  width: number;
  height: number;
  /** For the load; the screenshot gets what is left of `budgetMs`. */
  loadTimeoutMs: number;
  budgetMs: number;
}

export interface PageShot {
  finalUrl: string;
  status: number | null;
  title: string;
  png: Buffer;
  refusals: Refusal[];
  /** Requests the proxy let through that failed upstream (a name that does not resolve, a refused port). */
  failures: UpstreamFailure[];
  refusedCount: number;
  loadMs: number;
  shotMs: number;
}

/** Runs before any page script, in every frame: the WebRTC constructors removed. */
const NO_WEBRTC = `for (const name of ["RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel", "RTCIceTransport"]) {
  try { delete globalThis[name]; } catch {}
  try { Object.defineProperty(globalThis, name, { value: undefined, configurable: false, writable: false }); } catch {}
}`;

const DIAGNOSES = new Set<string>(["E_DNS_FAIL", "E_CONN_REFUSED", "E_UNREACHABLE", "E_TLS", "E_TIMEOUT"]);

function firstLine(err: unknown): string {
  return oneLine(String((err as Error)?.message ?? err).split("\n")[0] ?? "", 200);
}

/** Chromium's words for its page, context or process being gone (it crashed, or something killed it). */
const BROWSER_GONE =
  /Target (page, context or browser )?(has been |was )?closed|Browser (has been )?closed|Page crashed|browser has disconnected/i;

/**
 * Why a navigation failed: what the proxy saw the target do, or the browser itself gone (E_EXEC_FAILED: a
 * program we run died; a target that was never asked has not refused anything), else a refused connection.
 */
export function navigationFailure(err: unknown, failed: UpstreamFailure | undefined, browserGone: boolean): DiagError {
  if (failed && DIAGNOSES.has(failed.code)) {
    return new DiagError(failed.code as DiagnosisCode, `page did not load: ${failed.target}: ${failed.detail}`);
  }
  if (browserGone || BROWSER_GONE.test(firstLine(err))) {
    return new DiagError("E_EXEC_FAILED", `the browser died while loading the page: ${firstLine(err)}`, {
      hint: "try again; if it repeats, see the server's log (the browser may be out of memory)",
    });
  }
  return new DiagError(
    "E_CONN_REFUSED",
    `page did not load: ${failed ? `${failed.target}: ${failed.detail}` : firstLine(err)}`,
  );
}

/** The document itself was refused (a redirect out of the allowlist): name it, not a later subresource. */
function forbiddenDocument(doc: Response, refusals: readonly Refusal[] = []): DiagError {
  const where = maskUrl(doc.url());
  const r = refusals.find((x) => x.target === where) ?? refusals[0];
  return new DiagError("E_FORBIDDEN", `the page went to a target outside the allowlist: ${where}`, {
    hint: `${r?.reason ?? "not allowed"}; add it to OUTBOUND_ALLOW only if webcheck should reach it`,
  });
}

export async function snapshotPage(
  browser: Browser,
  policy: OutboundPolicy,
  req: PageRequest,
  signal: AbortSignal,
): Promise<PageShot> {
  const proxy = await startFilterProxy(policy, signal);
  const context = await browser.newContext({
    proxy: { server: proxy.url },
    viewport: { width: req.width, height: req.height },
    // A bad certificate is tls_info's finding; here it must not hide what the page shows.
    ignoreHTTPSErrors: true,
    serviceWorkers: "block",
    acceptDownloads: false,
    // The hop marker on every request the page makes, set by Chromium itself: the filter proxy marks plain http,
    // but inside an https tunnel only the browser can, and a sibling serving TLS on a port not known as ours
    // would otherwise run a tool for a page that navigates to it (ADR 0048).
    extraHTTPHeaders: { ...HOP_HEADERS },
  });
  // WebRTC talks UDP (STUN, ICE) around any proxy: a page gets no RTCPeerConnection, in any frame.
  await context.addInitScript(NO_WEBRTC);
  // The client went away or the stream's duration ended: stop loading now.
  const onAbort = () => void context.close().catch(() => undefined);
  signal.addEventListener("abort", onAbort, { once: true });
  const started = performance.now();
  try {
    const page = await context.newPage();
    // The main frame's latest document: a script or meta refresh may navigate after goto has returned.
    let lastDocument: Response | null = null;
    // A refused document answers at once, whatever title() or screenshot() is waiting on: a frame that
    // navigation destroyed may never finish either (the proxy's refusal is in the headers Chromium reports
    // with the response, so no later round trip to the browser is needed to see it).
    let refuse: (err: DiagError) => void = () => undefined;
    const refused = new Promise<never>((_, reject) => {
      refuse = reject;
    });
    refused.catch(() => undefined);
    page.on("response", (r) => {
      if (!r.request().isNavigationRequest() || r.frame() !== page.mainFrame()) return;
      lastDocument = r;
      if (r.headers()[BLOCKED_HEADER]) refuse(forbiddenDocument(r, proxy.refusals));
    });
    const unlessRefused = <T>(work: Promise<T>): Promise<T> => {
      work.catch(() => undefined);
      return Promise.race([work, refused]);
    };
    let response: Response | null;
    try {
      response = await page.goto(req.url, { waitUntil: "load", timeout: req.loadTimeoutMs });
    } catch (err) {
      if (signal.aborted) throw new DiagError("E_TIMEOUT", "snapshot stopped: the stream ended before the page loaded");
      if ((err as Error).name === "TimeoutError") {
        throw new DiagError("E_TIMEOUT", `page did not load within ${req.loadTimeoutMs} ms: ${maskUrl(req.url)}`);
      }
      // A navigation that failed after a refusal was refused (a redirect out of the allowlist, over https).
      const blocked = proxy.refusals[0];
      if (blocked) {
        throw new DiagError("E_FORBIDDEN", `the page went to a target outside the allowlist: ${blocked.target}`, {
          hint: blocked.reason,
        });
      }
      throw navigationFailure(err, proxy.failures[0], page.isClosed() || !browser.isConnected());
    }
    const loadMs = Math.round(performance.now() - started);
    const refusedDocument = (): void => {
      const doc: Response | null = lastDocument ?? response;
      if (doc?.headers()[BLOCKED_HEADER]) throw forbiddenDocument(doc, proxy.refusals);
    };
    refusedDocument();
    const headers = response?.headers() ?? {};
    const failedCode = headers[FAILED_HEADER];
    if (failedCode && DIAGNOSES.has(failedCode)) {
      const f = proxy.failures.at(-1);
      throw new DiagError(
        failedCode as DiagnosisCode,
        `page did not load: ${f ? `${f.target}: ${f.detail}` : maskUrl(page.url())}`,
      );
    }
    // A navigation after load (a meta refresh, a script) can destroy the page's context under title() or
    // screenshot(); on a busy machine it often does. If it went outside the allowlist, that is the answer.
    // Bounded: the load state waited for 2 s at most, a refusal at once.
    const afterNavigation = async (err: unknown): Promise<never> => {
      if (err instanceof DiagError) throw err;
      await unlessRefused(page.waitForLoadState("load", { timeout: 2_000 }).catch(() => undefined));
      refusedDocument();
      throw err;
    };
    const title = oneLine(await unlessRefused(page.title()).catch(afterNavigation), 200);
    const shotStarted = performance.now();
    const left = Math.max(500, req.budgetMs - (shotStarted - started));
    const png = await unlessRefused(page.screenshot({ type: "png", fullPage: false, timeout: left })).catch(
      (err: Error) => {
        if (err instanceof DiagError) throw err;
        if (err.name === "TimeoutError")
          throw new DiagError("E_TIMEOUT", `screenshot did not finish within ${Math.round(left)} ms`);
        return afterNavigation(err);
      },
    );
    // A navigation during the screenshot (a timed redirect) must not pass for the page.
    refusedDocument();
    return {
      finalUrl: maskUrl(page.url()),
      status: response?.status() ?? null,
      title,
      png,
      refusals: [...proxy.refusals],
      failures: [...proxy.failures],
      refusedCount: proxy.refusedCount(),
      loadMs,
      shotMs: Math.round(performance.now() - shotStarted),
    };
  } finally {
    signal.removeEventListener("abort", onAbort);
    await context.close().catch(() => undefined);
    await proxy.close();
  }
}
