/**
 * The local page at the gateway (GET /): static HTML, CSS and script shipped as strings in the bundle (no
 * build step, no external asset), and a small JSON/SSE API under /api that the page calls. Everything runs
 * through the gateway's own catalog, attacher and triage loop; the gateway's guards (127.0.0.1, Host, Origin,
 * token) have already passed when a request reaches here.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { parseInput } from "@roadnerd/conventions/internal";
import { z } from "zod";
import { shownUrl } from "../attach.ts";
import { errorInfo, httpStatusOf } from "../errors.ts";
import type { GatewayOptions } from "../gateway.ts";
import { closeIfRefused } from "../gateway-unread-body.ts";
import { runTriage } from "../triage.ts";
import { FAVICON_SVG } from "./favicon.ts";
import { PAGE_CSS, PAGE_HTML } from "./page-html.ts";
import { PAGE_JS } from "./page-script.ts";
import { sendScreenshot } from "./screenshot.ts";
import { openSse } from "./sse.ts";

const MAX_API_BODY = 64 * 1024;

/** Nothing but our own files: no inline script, no other origin, never framed. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const STATIC: Record<string, { type: string; body: string }> = {
  "/": { type: "text/html; charset=utf-8", body: PAGE_HTML },
  "/page.js": { type: "text/javascript; charset=utf-8", body: PAGE_JS },
  "/page.css": { type: "text/css; charset=utf-8", body: PAGE_CSS },
  "/favicon.svg": { type: "image/svg+xml", body: FAVICON_SVG },
  "/favicon.ico": { type: "image/svg+xml", body: FAVICON_SVG },
};

function json(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return; // answered at shutdown already (gateway-in-flight.ts)
  closeIfRefused(res, status);
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

const argsObject = z.record(z.string(), z.unknown());

/** A body over MAX_API_BODY: 413 E_TOO_LARGE, as a server's /actions answers it (the code's own status). */
class TooLarge extends Error {
  readonly code = "E_TOO_LARGE";
  constructor() {
    super(`body larger than ${MAX_API_BODY} bytes`);
  }
}

/**
 * The body as a JSON object ({} when empty); over the limit E_TOO_LARGE (413), answered at once and the
 * connection closed after it, the rest unread (at once when Content-Length says so); anything else is refused
 * as E_INVALID_INPUT (400).
 */
function readJson(req: IncomingMessage, res: ServerResponse): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    const tooLarge = () => {
      req.off("data", onData);
      req.pause();
      res.once("finish", () => req.socket.destroySoon());
      res.setHeader("connection", "close");
      reject(new TooLarge());
    };
    const onData = (c: Buffer) => {
      size += c.length;
      if (size <= MAX_API_BODY) return void chunks.push(c);
      tooLarge();
    };
    if (Number(req.headers["content-length"]) > MAX_API_BODY) return tooLarge();
    req.on("data", onData);
    req.on("end", () => {
      if (size > MAX_API_BODY) return;
      let body: unknown;
      try {
        body = size === 0 ? {} : JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return reject(new Error("body is not JSON"));
      }
      const args = argsObject.safeParse(body);
      if (!args.success) return reject(new Error("body must be a JSON object of the tool's arguments"));
      resolve(args.data);
    });
    req.on("error", reject);
  });
}

/** Each server: running (with its /healthz), or idle (attached on its first call). Nothing is spawned. */
async function servers(options: GatewayOptions) {
  return Promise.all(
    options.catalog.servers.map(async (s) => {
      const tools = options.catalog.entries.filter((e) => e.server === s.name).map((e) => e.tool);
      // A server reached at a URL (`roadnerd up` hosts it) is asked; a spawned one only while it runs.
      const reachable = options.attacher.isRunning(s.name) || options.attacher.isRemote(s.name);
      if (!reachable) return { name: s.name, state: "idle", tools };
      try {
        const { client } = await options.attacher.ensure(s.name);
        const health = await client.healthz({ signal: AbortSignal.timeout(2000) });
        const pid = options.attacher.pidOf(s.name);
        return {
          name: s.name,
          state: health.ok ? "ok" : "error",
          version: health.version,
          url: shownUrl(client.baseUrl),
          pid,
          tools,
        };
      } catch (e) {
        return { name: s.name, state: "error", error: errorInfo(e), tools };
      }
    }),
  );
}

/** One tool, its input checked by its own schema first (a bad call spawns nothing). */
async function call(options: GatewayOptions, server: string, tool: string, args: unknown, signals: PageSignals) {
  const entry = options.catalog.entries.find((e) => e.server === server && e.tool === tool);
  if (!entry) return { status: 404, body: { error: { code: "E_UNKNOWN_TOOL", message: `no tool ${server}/${tool}` } } };
  try {
    const input = z.record(z.string(), z.unknown()).parse(args);
    parseInput(entry.definition, input);
    const { signal, caller } = signals;
    const r = await options.attacher.call(server, tool, input, { signal, ...(caller ? { caller } : {}) });
    return { status: 200, body: { result: r.result } };
  } catch (e) {
    // The code's own status, as a server's /actions answers it (an invalid input was a 200 before).
    const error = errorInfo(e);
    return { status: httpStatusOf(error.code), body: { error } };
  }
}

const triageBody = z.object({ symptom: z.string().max(300).default("") });

/** The triage loop with each step sent as it ends, then the outcome; the run stops if the page goes away. */
async function triage(req: IncomingMessage, res: ServerResponse, options: GatewayOptions, signals: PageSignals) {
  const { symptom } = triageBody.parse(await readJson(req, res));
  const sse = openSse(res, signals.shutdown);
  const { signal } = signals;
  try {
    const outcome = await runTriage({
      planner: options.planner(),
      catalog: options.catalog,
      attacher: options.attacher,
      symptom,
      signal,
      ...(signals.caller ? { caller: signals.caller } : {}),
      onStep: (line) => sse.send("step", line),
      ...(options.logDir ? { logDir: options.logDir } : {}),
    });
    const { history: _history, ...report } = outcome;
    sse.send("result", report);
  } catch (e) {
    sse.send("error", errorInfo(e));
  }
  sse.end();
}

const watchQuery = z.object({
  interval_ms: z.coerce.number().int().min(500).max(60_000).default(2000),
  duration_ms: z.coerce.number().int().min(1000).max(300_000).default(120_000), // network's own ceiling
});

/** network's connectivity_watch, relayed: one `round` per message until its duration or the page leaves. */
async function watch(url: URL, res: ServerResponse, options: GatewayOptions, signals: PageSignals) {
  const query = watchQuery.parse(Object.fromEntries(url.searchParams));
  const sse = openSse(res, signals.shutdown);
  const { signal } = signals;
  try {
    const { client } = await options.attacher.ensure("network");
    for await (const event of client.stream("connectivity_watch", query, { signal })) {
      if (event.event === "message") sse.send("round", event.data);
      else if (event.event === "error") sse.send("error", event.data);
    }
  } catch (e) {
    if (!signal.aborted) sse.send("error", errorInfo(e));
  }
  sse.end();
}

/**
 * `signal` aborts when the caller hangs up or the gateway stops (its work is cancelled); `shutdown` when the
 * gateway's grace period is over (a stream still open ends with E_BUSY).
 */
export interface PageSignals {
  signal: AbortSignal;
  shutdown?: AbortSignal;
  /** The client the page calls for (the gateway's share key), named to the servers. */
  caller?: string;
}

/** Answers the page and its API; false when the path is not the page's (the gateway answers it). */
export function answerPage(
  req: IncomingMessage,
  res: ServerResponse,
  options: GatewayOptions,
  signals: PageSignals,
): boolean {
  const { signal } = signals;
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const path = url.pathname;
  const asset = STATIC[path];
  if (asset && req.method === "GET") {
    res.writeHead(200, {
      "content-type": asset.type,
      "content-security-policy": CSP,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "cache-control": "no-store",
    });
    res.end(asset.body);
    return true;
  }
  if (!path.startsWith("/api/")) return false;
  const failed = (e: unknown) => {
    if (res.headersSent) return;
    if (e instanceof TooLarge) return json(res, httpStatusOf(e.code), { error: errorInfo(e) });
    json(res, 400, { error: { ...errorInfo(e), code: "E_INVALID_INPUT" } });
  };
  const route = `${req.method} ${path}`;
  if (route === "GET /api/servers") {
    servers(options).then((list) => json(res, 200, { servers: list }), failed);
    return true;
  }
  if (route === "POST /api/triage") {
    triage(req, res, options, signals).catch(failed);
    return true;
  }
  if (route === "GET /api/watch") {
    watch(url, res, options, signals).catch(failed);
    return true;
  }
  if (route === "GET /api/screenshot") {
    sendScreenshot(url.searchParams.get("path") ?? "", res, options, signal).catch(failed);
    return true;
  }
  const m = /^\/api\/call\/([a-z0-9-]+)\/([a-z0-9_]+)$/.exec(path);
  if (m?.[1] && m[2] && req.method === "POST") {
    const [server, tool] = [m[1], m[2]];
    readJson(req, res)
      .then((args) => call(options, server, tool, args, signals))
      .then((r) => json(res, r.status, r.body), failed);
    return true;
  }
  json(res, 404, { error: { code: "E_UNKNOWN_TOOL", message: `no page route ${route}` } });
  return true;
}
