/**
 * One warm Chromium per server runtime (`ctx.use(warmBrowser)`): launched on the first snapshot, shared by the
 * snapshots that follow, closed after WEBCHECK_BROWSER_IDLE_MS without one and when the runtime closes (and
 * killed with its process group when the server exits). At most WEBCHECK_MAX_SNAPSHOTS run at once; one more
 * is E_BUSY. A browser that dies is forgotten and the next snapshot launches a new one.
 */
import { rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLimiter, createSharedCalls, DiagError, type Limiter } from "@roadnerd/conventions";
import type { Browser } from "playwright-core";
import { defineResource } from "../kit.ts";
import { type FilterProxy, startFilterProxy } from "./filter-proxy.ts";
import { findChromium, launchChromium } from "./launch.ts";

export interface WarmOptions {
  executablePath: string;
  execPath: string;
  idleMs: number;
  maxSnapshots: number;
}

export interface Lease {
  browser: Browser;
  /** This snapshot launched the browser. */
  cold: boolean;
  launchMs: number;
  release(): void;
}

interface Running {
  browser: Browser;
  fallback: FilterProxy;
  home: string;
}

const homes = new Set<string>();
let exitHook = false;

/** HOME directories of live browsers go with the process, as Playwright's profiles do. */
function trackHome(home: string): void {
  homes.add(home);
  if (exitHook) return;
  exitHook = true;
  process.once("exit", () => {
    for (const h of homes) rmSync(h, { recursive: true, force: true });
  });
}

export class WarmBrowser {
  readonly #options: WarmOptions;
  readonly #limiter: Limiter;
  /** Snapshots that find no browser share one launch (the kernel's single-flight). */
  readonly #launches = createSharedCalls();
  #running: Running | undefined;
  #idle: NodeJS.Timeout | undefined;
  #active = 0;
  #closed = false;

  constructor(options: WarmOptions) {
    this.#options = options;
    this.#limiter = createLimiter(options.maxSnapshots, "snapshots");
  }

  /** A slot (E_BUSY beyond the bound) and the browser, launching it after `preflight` when none is up. */
  async lease(preflight: () => Promise<void>): Promise<Lease> {
    const release = this.#limiter.take("snapshot");
    clearTimeout(this.#idle);
    this.#active += 1;
    const done = () => {
      release();
      this.#active -= 1;
      if (this.#active === 0) this.#scheduleIdle();
    };
    let cold = false;
    const started = performance.now();
    try {
      const running =
        this.#running ??
        (await this.#launches.run("launch", undefined, 0, async () => {
          // Only the snapshot that starts the launch runs this: it is the cold one.
          cold = true;
          await preflight();
          return this.#launch();
        }));
      return { browser: running.browser, cold, launchMs: Math.round(performance.now() - started), release: once(done) };
    } catch (err) {
      done();
      throw err;
    }
  }

  /** The runtime is closing: no more leases, a launch in flight is waited for, the browser is shut down. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#idle);
    await this.#launches.close();
    await this.#stop();
  }

  /** Shut the browser down (idle, or closing); the next lease launches a new one. */
  async #stop(): Promise<void> {
    const running = this.#running;
    this.#running = undefined;
    if (running) await shutdown(running);
  }

  #scheduleIdle(): void {
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => {
      if (this.#active === 0) void this.#stop();
    }, this.#options.idleMs);
    // An idle browser must not keep the process alive.
    this.#idle.unref();
  }

  async #launch(): Promise<Running> {
    // The browser's HOME and profile live under the OS temp dir: a read-only one is a setup problem, said so.
    const home = await mkdtemp(join(tmpdir(), "roadnerd-webcheck-home-")).catch((err: NodeJS.ErrnoException) => {
      throw new DiagError(
        "E_UNSUPPORTED",
        `cannot create the browser's home under ${tmpdir()} (${err.code ?? "error"})`,
        {
          hint: "give the server a writable temp dir: TMPDIR=<dir>, or a tmpfs on /tmp in a read-only container",
        },
      );
    });
    trackHome(home);
    const fallback = await startFilterProxy(null, new AbortController().signal);
    let browser: Browser;
    try {
      browser = await launchChromium({
        executablePath: this.#options.executablePath,
        execPath: this.#options.execPath,
        fallbackProxy: fallback.url,
        home,
      });
    } catch (err) {
      await fallback.close();
      await removeHome(home);
      throw err;
    }
    const running: Running = { browser, fallback, home };
    browser.once("disconnected", () => {
      // Crashed or killed: the next snapshot launches a fresh one.
      if (this.#running === running) this.#running = undefined;
      void cleanup(running);
    });
    if (this.#closed) {
      // The runtime closed while this launch ran: the browser must not outlive it.
      await shutdown(running);
      throw new DiagError("E_BUSY", "the server is closing");
    }
    this.#running = running;
    return running;
  }
}

function once(fn: () => void): () => void {
  let called = false;
  return () => {
    if (called) return;
    called = true;
    fn();
  };
}

async function removeHome(home: string): Promise<void> {
  homes.delete(home);
  await rm(home, { recursive: true, force: true });
}

async function cleanup(r: Running): Promise<void> {
  await r.fallback.close();
  await removeHome(r.home);
}

async function shutdown(r: Running): Promise<void> {
  await r.browser.close().catch(() => undefined);
  await cleanup(r);
}

/** This runtime's warm browser; making it finds the binary on EXEC_PATH (E_NO_BINARY, and nothing kept, if absent). */
export const warmBrowser = defineResource({
  name: "browser",
  create: ({ config }) =>
    new WarmBrowser({
      executablePath: findChromium(config.EXEC_PATH),
      execPath: config.EXEC_PATH,
      idleMs: config.WEBCHECK_BROWSER_IDLE_MS,
      maxSnapshots: config.WEBCHECK_MAX_SNAPSHOTS,
    }),
  close: (browser) => browser.close(),
});
