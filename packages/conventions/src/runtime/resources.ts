/**
 * What a server keeps between calls (a warm browser, single-flight maps, a recent scan) is a resource its
 * runtime owns: declared once with defineResource, made on first use in each runtime (`ctx.use(resource)`),
 * closed, latest first, when the runtime closes. Two runtimes in one process (two servers, a test's two apps)
 * never share an instance: each lives in the resource's WeakMap under its own runtime's key.
 */
import type { BaseConfig } from "../define/config.ts";
import { DiagError } from "../errors/errors.ts";
import type { Logger } from "./logger.ts";

/**
 * A close hook is waited for this long; then the runtime logs it and goes on. A supervisor kills a server that
 * has not exited 2 s after SIGTERM: a slow close must not use that up (what is left ends with the process:
 * Playwright kills its browser's process group on exit).
 */
export const RESOURCE_CLOSE_MS = 1_000;

/** What a resource is made from: its runtime's config and logger. */
export interface ResourceHost<C = BaseConfig> {
  config: C;
  log: Logger;
}

export interface ResourceSpec<T, C = BaseConfig> {
  /** What it is, for logs and errors ("browser", "statfs calls"). */
  name: string;
  /** Makes a runtime's instance on its first use. A throw stores nothing: the next use tries again. */
  create(host: ResourceHost<C>): T;
  /** Called once when the runtime closes (after its open streams have ended, over HTTP). */
  close?(value: T): void | Promise<void>;
}

export interface Resource<T, C = BaseConfig> extends ResourceSpec<T, C> {
  /** Each runtime's instance, under that runtime's key (the kernel's own: use ctx.use). */
  readonly instances: WeakMap<object, { value: T }>;
}

export function defineResource<T, C = BaseConfig>(spec: ResourceSpec<T, C>): Resource<T, C> {
  return { ...spec, instances: new WeakMap() };
}

/** The resources one runtime has made, and closing them. */
export interface ResourceScope<C> {
  /** This runtime's instance, made now if it is the first use; E_BUSY once the runtime is closing. */
  use<T>(resource: Resource<T, C>): T;
  /** Close every instance made, latest first; the same promise for every caller. */
  close(): Promise<void>;
}

export function createResourceScope<C>(host: ResourceHost<C>): ResourceScope<C> {
  const key = {};
  const made: Array<{ name: string; close: () => void | Promise<void> }> = [];
  let closed: Promise<void> | undefined;

  async function closeOne(r: (typeof made)[number]): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), RESOURCE_CLOSE_MS);
      timer.unref();
    });
    try {
      const how = await Promise.race([Promise.resolve(r.close()), late]);
      if (how === "late") host.log.warn({ resource: r.name, after_ms: RESOURCE_CLOSE_MS }, "resource still closing");
    } catch (err) {
      host.log.warn({ resource: r.name, err }, "resource did not close cleanly");
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    use(resource) {
      if (closed) throw new DiagError("E_BUSY", `the server is closing (${resource.name})`);
      const hit = resource.instances.get(key);
      if (hit) return hit.value;
      const value = resource.create(host);
      resource.instances.set(key, { value });
      const { close } = resource;
      if (close) made.push({ name: resource.name, close: () => close.call(resource, value) });
      return value;
    },
    close() {
      closed ??= (async () => {
        for (const r of made.reverse()) await closeOne(r);
      })();
      return closed;
    },
  };
}
