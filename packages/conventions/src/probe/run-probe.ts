/**
 * One probe: a slot of the call bound (the scraper's share, preemptible), the module's deadline (or the scraper's, less a margin, as blackbox
 * does), the prober, and the series every probe has: probe_success and probe_duration_seconds. A refusal by the
 * outbound policy is a failed probe saying why (`roadnerd_probe_refused{reason}`), any other error its code.
 */
import { setMaxListeners } from "node:events";
import { MAX_TIMEOUT_MS } from "../define/fields.ts";
import { DiagError, toDiagError } from "../errors/errors.ts";
import { refusalReason } from "../metrics/refusal-reason.ts";
import { preemptedError } from "../runtime/call-slots.ts";
import { runTool } from "../runtime/run-tool.ts";
import type { Runtime } from "../runtime/runtime.ts";
import { DEFAULT_PROBE_TIMEOUT_MS, type ProbeModule } from "./modules.ts";
import type { ProbeContext, ProbeOutcome, ProbeSeries } from "./prober.ts";

/** Left of the scraper's timeout for the answer to travel back (blackbox's --timeout-offset). */
export const SCRAPE_MARGIN_MS = 500;
/** Time a prober gets past its deadline to turn the abort into a result before the probe is called failed. */
const GRACE_MS = 300;

export function probeTimeoutMs(module: ProbeModule, scrapeTimeoutHeader: string | undefined): number {
  const scrape = Number(scrapeTimeoutHeader) * 1000 - SCRAPE_MARGIN_MS;
  const fromScraper = Number.isFinite(scrape) && scrape > 0 ? scrape : Number.POSITIVE_INFINITY;
  const own = module.timeoutMs ?? (Number.isFinite(fromScraper) ? fromScraper : DEFAULT_PROBE_TIMEOUT_MS);
  const chosen = Math.min(own, fromScraper, MAX_TIMEOUT_MS);
  return Math.max(1, Math.round(chosen));
}

function failed(err: unknown, runtime: Runtime<unknown>): ProbeOutcome {
  const diag = toDiagError(err);
  if (diag.code === "E_FORBIDDEN") {
    const reason = refusalReason(diag);
    runtime.metrics.outboundRefused(reason);
    const help = "The outbound policy refused the target (1), by reason";
    return { success: false, series: [{ name: "roadnerd_probe_refused", help, value: 1, labels: { reason } }] };
  }
  const help = "The probe could not be made (1), by error code";
  return { success: false, series: [{ name: "roadnerd_probe_error", help, value: 1, labels: { code: diag.code } }] };
}

export async function runProbe(
  runtime: Runtime<unknown>,
  module: ProbeModule,
  target: string,
  timeoutMs: number,
  callerSignal: AbortSignal,
  caller?: string,
): Promise<ProbeSeries[]> {
  const what = `/probe ${module.name}`;
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  // The scraper's share of the call slots, preemptible like any call (call-slots.ts): a scraper holding many
  // slow probes gives its newest one up to another caller, and that probe is answered 503 E_BUSY at once.
  let lost: DiagError | undefined;
  let onLost: (err: DiagError) => void = () => {};
  const lostSlot = new Promise<never>((_, reject) => {
    onLost = reject;
  });
  lostSlot.catch(() => {});
  const release = runtime.calls.take(what, caller, () => {
    lost = preemptedError(what, runtime.calls.max);
    onLost(lost);
    controller.abort(lost);
  });
  const started = performance.now();
  const stop = (why: string) => () => controller.abort(new DiagError("E_TIMEOUT", why));
  const deadline = setTimeout(stop(`probe ${module.name} timed out (timeout ${timeoutMs} ms)`), timeoutMs);
  const onGone = stop("probe cancelled by the scraper");
  callerSignal.addEventListener("abort", onGone, { once: true });
  const remaining = () => Math.max(1, Math.round(timeoutMs - (performance.now() - started)));
  const ctx: ProbeContext = {
    outbound: runtime.outbound,
    signal: controller.signal,
    remaining,
    log: runtime.log.child({ probe: module.name }),
    call: (tool, input) =>
      runTool(tool, { ...input, timeout_ms: remaining() }, runtime, { signal: controller.signal, caller }),
  };
  let hardStop: NodeJS.Timeout | undefined;
  let outcome: ProbeOutcome;
  try {
    outcome = await Promise.race([
      module.prober.run(target, module.options, ctx),
      new Promise<never>((_, reject) => {
        hardStop = setTimeout(
          () => reject(new DiagError("E_TIMEOUT", `probe ${module.name} did not finish (timeout ${timeoutMs} ms)`)),
          timeoutMs + GRACE_MS,
        );
      }),
      lostSlot,
    ]);
  } catch (err) {
    if (lost) throw lost;
    outcome = failed(err, runtime);
  } finally {
    clearTimeout(deadline);
    clearTimeout(hardStop);
    callerSignal.removeEventListener("abort", onGone);
    controller.abort(new DiagError("E_TIMEOUT", "probe already answered"));
    release();
  }
  // Whatever the prober made of the abort, a probe that lost its slot is answered E_BUSY.
  if (lost) throw lost;
  runtime.metrics.probed(module.name, outcome.success);
  const seconds = (performance.now() - started) / 1000;
  return [
    { name: "probe_success", help: "Displays whether or not the probe was a success", value: outcome.success ? 1 : 0 },
    { name: "probe_duration_seconds", help: "Returns how long the probe took to complete in seconds", value: seconds },
    ...outcome.series,
  ];
}
