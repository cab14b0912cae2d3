/**
 * The one place webcheck starts a process outside the kernel's exec: headless Chromium, through playwright-core.
 *
 * Why not ctx.exec: the kernel's exec runs a command to completion within one call's deadline and hands back
 * its output. A browser must outlive the call that started it (one warm browser serves every snapshot: a cold
 * start costs seconds and hundreds of MiB, a warm shot half a second), and Playwright drives it over pipes on
 * fds 3 and 4 that only its own launcher sets up. So the binary is declared like any command
 * (`chromiumVersion` below: the snapshot stream runs it through ctx.exec before a launch, which finds it on
 * EXEC_PATH or answers E_NO_BINARY, and the server's allowlist and Debian packages name it) and only this
 * module launches it, with what the kernel's exec would give it: a scrubbed environment, no shell, its own
 * process group (Playwright kills the group on exit), and a fresh temporary profile per browser.
 *
 * The flags keep it quiet and inside the allowlist: every request goes to a proxy (filter-proxy.ts); the
 * browser-wide proxy refuses everything, each snapshot's context gets its own policy-checked one; names never
 * resolve inside the browser (only the proxy resolves, through the policy); no QUIC (UDP would bypass an HTTP
 * proxy), WebRTC may not use UDP outside the proxy, no background, update, sync or metrics traffic.
 */
import { accessSync, constants } from "node:fs";
import { join } from "node:path";
import { command, DiagError } from "@roadnerd/conventions";
import type { Browser } from "playwright-core";

export const CHROMIUM = "chromium";

/** The browser binary, declared as every command is; run once before a launch as the preflight. */
export const chromiumVersion = command(CHROMIUM, ["--version"]);

/** Playwright's own switches already cover most background traffic; these add what it leaves on. */
export function chromiumArgs(fallbackProxy: string): string[] {
  return [
    `--proxy-server=${fallbackProxy}`,
    // Loopback too goes through the proxy (Chromium bypasses it for loopback by default).
    "--proxy-bypass-list=<-loopback>",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--disable-quic",
    // Belt and braces: pages get no RTCPeerConnection at all (snapshot-page.ts), and UDP is off for WebRTC.
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--enforce-webrtc-ip-permission-check",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-domain-reliability",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-client-side-phishing-detection",
    "--no-first-run",
    "--no-pings",
    "--metrics-recording-only",
    "--disable-breakpad",
    "--safebrowsing-disable-auto-update",
    // One --disable-features wins over another, so this repeats Playwright's list and adds to it.
    "--disable-features=Translate,OptimizationHints,NetworkTimeServiceQuerying,MediaRouter,DialMediaRouteProvider,CertificateTransparencyComponentUpdater,AutofillServerCommunication,InterestFeedContentSuggestions,PreconnectToSearch,AimEnabled,HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,PaintHolding,DestroyProfileOnBrowserClose,AvoidUnnecessaryBeforeUnloadCheckSync,AvoidCorsURLLoaderRestartOnRedirect,ThirdPartyStoragePartitioning,LensOverlay",
  ];
}

/** The binary's absolute path on EXEC_PATH (the kernel's exec finds it the same way), or E_NO_BINARY. */
export function findChromium(execPath: string): string {
  for (const dir of execPath.split(":").filter(Boolean)) {
    const candidate = join(dir, CHROMIUM);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  throw new DiagError("E_NO_BINARY", `${CHROMIUM} not found on EXEC_PATH (${execPath})`, {
    hint: "install it (Debian: apt-get install chromium)",
  });
}

/**
 * playwright-core, loaded on the first snapshot (start-up is the orchestrator's attach latency). It is kept out
 * of the esbuild bundle (`roadnerd.runtime` in package.json): it reads its own package files (package.json,
 * browsers.json) beside its code at load, so it only runs from its installed directory.
 */
const PLAYWRIGHT = "playwright-core";

async function loadPlaywright(): Promise<typeof import("playwright-core")> {
  try {
    return await import("playwright-core");
  } catch (err) {
    throw new DiagError("E_UNSUPPORTED", `${PLAYWRIGHT} cannot be loaded: ${(err as Error).message.split("\n")[0]}`, {
      hint: "install the server with its dependencies (pnpm install); snapshots need playwright-core beside it",
    });
  }
}

export interface LaunchOptions {
  executablePath: string;
  execPath: string;
  /** The browser-wide proxy (refuses everything). */
  fallbackProxy: string;
  /** A fresh, empty HOME (NSS and caches write there), removed with the browser. */
  home: string;
}

export async function launchChromium(o: LaunchOptions): Promise<Browser> {
  const { chromium } = await loadPlaywright();
  return chromium.launch({
    executablePath: o.executablePath,
    headless: true,
    // Playwright creates and removes a fresh --user-data-dir per launch.
    args: chromiumArgs(o.fallbackProxy),
    // Not the server's environment: no http_proxy, no tokens.
    env: { PATH: o.execPath, LC_ALL: "C", LANG: "C", TZ: "UTC", HOME: o.home },
    // The kernel owns the signals: it exits on them, and Playwright kills the browser's group on exit.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    timeout: 30_000,
  });
}
