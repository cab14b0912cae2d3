/**
 * One warm Chromium per server process: launched on the first snapshot, shared by the snapshots that follow,
 * closed after WEBCHECK_BROWSER_IDLE_MS without one (and killed with its process group when the server exits).
 * At most WEBCHECK_MAX_SNAPSHOTS run at once; one more is E_BUSY. A browser that dies is forgotten and the
 * next snapshot launches a new one.
 */
import { rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLimiter, DiagError, type Limiter } from "@roadnerd/conventions";
import type { Browser } from "playwright-core";
import { type FilterProxy, startFilterProxy } from "./filter-proxy.ts";
import { launchChromium } from "./launch.ts";

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
  #running: Promise<Running> | undefined;
  #idle: NodeJS.Timeout | undefined;
  #active = 0;

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
    const cold = this.#running === undefined;
    const started = performance.now();
    try {
      if (!this.#running) {
        const launching = preflight().then(() => this.#launch());
        this.#running = launching;
        launching.catch(() => {
          if (this.#running === launching) this.#running = undefined;
        });
      }
      const running = await this.#running;
      return { browser: running.browser, cold, launchMs: Math.round(performance.now() - started), release: once(done) };
    } catch (err) {
      done();
      throw err;
    }
  }

  async close(): Promise<void> {
    clearTimeout(this.#idle);
    const running = this.#running;
    this.#running = undefined;
    if (!running) return;
    const r = await running.catch(() => undefined);
    if (r) await shutdown(r);
  }

  #scheduleIdle(): void {
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => {
      if (this.#active === 0) void this.close();
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
    try {
      const browser = await launchChromium({
        executablePath: this.#options.executablePath,
        execPath: this.#options.execPath,
        fallbackProxy: fallback.url,
        home,
      });
      const running: Running = { browser, fallback, home };
      browser.once("disconnected", () => {
        // Crashed or killed: the next snapshot launches a fresh one.
        void this.#running?.then((r) => {
          if (r === running) this.#running = undefined;
        });
        void cleanup(running);
      });
      return running;
    } catch (err) {
      await fallback.close();
      await removeHome(home);
      throw err;
    }
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

const browsers = new Map<string, WarmBrowser>();

/** The process's warm browser for this binary (created on first use with these bounds). */
export function warmBrowser(options: WarmOptions): WarmBrowser {
  // Keyed by everything it was built with: a server has one config, so one browser.
  const key = JSON.stringify(options);
  let b = browsers.get(key);
  if (!b) {
    b = new WarmBrowser(options);
    browsers.set(key, b);
  }
  return b;
}

/** Close every warm browser (tests' afterAll; the server itself relies on the exit hook). */
export async function closeAllBrowsers(): Promise<void> {
  await Promise.all([...browsers.values()].map((b) => b.close()));
  browsers.clear();
}
