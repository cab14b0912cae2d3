/**
 * snapshot against real headless Chromium (one runtime, so one warm browser, for the whole file) and pages this test serves on
 * loopback. The allowlist is 127.0.0.1; an "outside" host on 127.0.0.2 counts every connection offered to it,
 * so a redirect, an image or a WebSocket that slipped past the proxy would show. The run is sealed.
 */
import { createSocket } from "node:dgram";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collectStream, isLive, pidsWhere, testRuntime } from "@roadnerd/conventions/testing";
import { generateTestCerts, startTestServer, type TestServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";
import { snapshot } from "../../src/streams/snapshot.ts";
import { type Outside, PAGE_TITLE, startOutside, startPages } from "../helpers/pages.ts";
import { decodePngHeader } from "../helpers/png.ts";

let outside: Outside;
let pages: TestServer;
let dir: string;
let env: Record<string, string>;
type TestRuntime = ReturnType<typeof testRuntime>;
let runtime: TestRuntime;

beforeAll(async () => {
  outside = await startOutside();
  pages = await startPages(outside);
  dir = await mkdtemp(join(tmpdir(), "webcheck-snap-"));
  env = { OUTBOUND_ALLOW: "127.0.0.1", WEBCHECK_ARTIFACTS_DIR: dir };
  runtime = testRuntime(server, { env });
});

afterAll(async () => {
  await runtime?.close();
  await pages?.close();
  await outside?.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * Room for a cold Chromium on a loaded machine: a long page-load deadline and duration, which cost nothing
 * when the page loads at once. Tests about a deadline set their own timeout_ms.
 */
const snap = (input: Record<string, unknown>, within: TestRuntime = runtime, signal?: AbortSignal) =>
  collectStream(server, snapshot, { duration_ms: 60_000, timeout_ms: 50_000, ...input }, { runtime: within, signal });

const realSetTimeout = globalThis.setTimeout;
/** Poll (bounded) until `check` holds. */
async function waitUntil(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600 && !check(); i++) await new Promise((r) => realSetTimeout(r, 50));
  if (!check()) throw new Error(`still waiting after 30 s: ${what}`);
}

/** Chromium processes that are children of this test process (live: an exited one not reaped yet is not). */
const browserPids = () =>
  pidsWhere("status", (s) => new RegExp(`^PPid:\\s+${process.pid}$`, "m").test(s) && /^Name:\s+chrom/m.test(s)).filter(
    isLive,
  );
const browsersHere = () => browserPids().length;

describe("snapshot", () => {
  it("screenshots a served page: PNG of the asked size, title, status, a file in the artifacts dir", async () => {
    const { messages, end } = await snap({ url: `${pages.url}/`, width: 800, height: 600 });
    expect(end).toBe("done");
    expect(messages).toHaveLength(1);
    const m = messages[0];
    expect(m).toMatchObject({
      url: `${pages.url}/`,
      final_url: `${pages.url}/`,
      status: 200,
      title: PAGE_TITLE,
      blocked: [],
      blocked_count: 0,
      failed: [],
      certificate: null,
      browser: { cold: true, version: expect.stringMatching(/^\d+\.\d+\.\d+\.\d+$/) },
      screenshot: { width: 800, height: 600 },
    });
    const png = decodePngHeader(m?.screenshot.path ?? "");
    expect(png).toEqual({ width: 800, height: 600, bytes: m?.screenshot.bytes });
    expect(png.bytes).toBeGreaterThan(1000);
    expect(m?.screenshot.path.startsWith(`${dir}/snapshot-`)).toBe(true);
    expect(m?.summary).toContain(`"${PAGE_TITLE}"`);
    expect(pages.requests).toContain("GET /");
  });

  it("the second snapshot reuses the warm browser", async () => {
    const before = browsersHere();
    const { messages } = await snap({ url: `${pages.url}/` });
    expect(messages[0]?.browser.cold).toBe(false);
    expect(messages[0]?.timing_ms.launch).toBe(0);
    expect(messages[0]?.screenshot).toMatchObject({ width: 1280, height: 800 });
    expect(browsersHere()).toBe(before);
    expect(before).toBe(1);
  });

  it("a redirect to a host outside the allowlist is refused, and that host sees nothing", async () => {
    await expect(snap({ url: `${pages.url}/away` })).rejects.toMatchObject({
      code: "E_FORBIDDEN",
      message: expect.stringContaining(`${outside.host}:${outside.port}`),
    });
    expect(pages.requests).toContain("GET /away");
    expect(outside.connections()).toBe(0);
  });

  it("a script or meta-refresh navigation to a host outside the allowlist is refused, not shown as the page", async () => {
    const away = `http://${outside.host}:${outside.port}/`;
    const pagesOf: Record<string, string> = {
      "/meta": `<meta http-equiv="refresh" content="0;url=${away}"><title>meta</title>`,
      "/script": `<title>script</title><script>location.href = "${away}";</script>`,
    };
    const web = await startTestServer((req, res) =>
      res.writeHead(200, { "content-type": "text/html" }).end(pagesOf[req.url ?? ""] ?? "none"),
    );
    try {
      for (const path of Object.keys(pagesOf)) {
        await expect(snap({ url: `${web.url}${path}` }), path).rejects.toMatchObject({
          code: "E_FORBIDDEN",
          message: `the page went to a target outside the allowlist: ${away}`,
        });
      }
      expect(outside.connections()).toBe(0);
    } finally {
      await web.close();
    }
  });

  it("a WebSocket and an image to a host outside the allowlist are refused and reported", async () => {
    const { messages } = await snap({ url: `${pages.url}/leaky` });
    const m = messages[0];
    expect(m?.status).toBe(200);
    expect(m?.title).toBe("ws refused");
    expect(m?.blocked).toEqual(
      expect.arrayContaining([`${outside.host}:${outside.port}`, `http://${outside.host}:${outside.port}/pixel.png`]),
    );
    expect(m?.blocked_count).toBeGreaterThanOrEqual(2);
    expect(m?.summary).toContain("outside the allowlist refused");
    expect(outside.connections()).toBe(0);
  });

  it("an https page with a self-signed certificate is shown, and said to be untrusted as a browser would", async () => {
    const certs = await generateTestCerts();
    const tls = await startTestServer(
      (_req, res) => res.writeHead(200, { "content-type": "text/html" }).end("<title>Portal</title><p>hi</p>"),
      { tls: certs.selfSigned },
    );
    try {
      const { messages } = await snap({ url: `https://127.0.0.1:${tls.port}/` });
      const m = messages[0];
      expect(m).toMatchObject({ status: 200, title: "Portal", certificate: { trusted: false } });
      expect(m?.certificate?.problem).toMatch(/self[-_ ]signed/i);
      expect(m?.summary).toMatch(/^CERTIFICATE NOT TRUSTED \(/);
    } finally {
      await tls.close();
      await certs.cleanup();
    }
  });

  it("WebRTC is gone: STUN/TURN to a host outside the allowlist gets no datagram, in a frame or an iframe", async () => {
    const udp = createSocket("udp4");
    let datagrams = 0;
    udp.on("message", () => {
      datagrams += 1;
    });
    await new Promise<void>((resolve) => udp.bind(3478, "127.0.0.5", resolve));
    const stun = `stun:127.0.0.5:${udp.address().port}`;
    // The page tries from its own window and from a fresh about:blank iframe's, then names what it could do.
    const page = `<title>rtc</title><script>
      const tries = [];
      async function offer(w, label) {
        try {
          const turn = "${stun.replace("stun:", "turn:")}?transport=tcp";
          const pc = new w.RTCPeerConnection({
            iceServers: [{ urls: "${stun}" }, { urls: turn, username: "a", credential: "b" }],
          });
          pc.createDataChannel("x");
          await pc.setLocalDescription(await pc.createOffer());
          tries.push(label + ":made");
        } catch (e) { tries.push(label + ":refused"); }
      }
      const f = document.createElement("iframe");
      document.body ? document.body.appendChild(f) : document.documentElement.appendChild(f);
      Promise.all([offer(window, "top"), offer(f.contentWindow, "iframe")])
        .then(() => { document.title = "rtc " + tries.join(","); });
    </script><img src="/slow">`;
    // The image holds the load event back 2 s, so ICE gathering has had its chance before the screenshot.
    const web = await startTestServer((req, res) => {
      if (req.url === "/slow") setTimeout(() => res.writeHead(404).end(), 4000);
      else res.writeHead(200, { "content-type": "text/html" }).end(page);
    });
    try {
      const { messages } = await snap({ url: `${web.url}/` });
      expect(datagrams).toBe(0);
      // WebRTC is not there at all, in the page or in a fresh iframe it makes.
      expect(messages[0]?.title).toBe("rtc top:refused,iframe:refused");
    } finally {
      udp.close();
      await web.close();
    }
  });

  it("a page that never loads is E_TIMEOUT, and the browser still works after", async () => {
    await expect(snap({ url: `${pages.url}/hang`, timeout_ms: 1000 })).rejects.toMatchObject({
      code: "E_TIMEOUT",
      message: expect.stringContaining("did not load within 1000 ms"),
    });
    const { messages } = await snap({ url: `${pages.url}/` });
    expect(messages[0]).toMatchObject({ title: PAGE_TITLE, browser: { cold: false } });
  });

  it("a target outside the allowlist is refused before any browser work", async () => {
    const requests = pages.requests.length;
    await expect(snap({ url: `http://${outside.host}:${outside.port}/` })).rejects.toMatchObject({
      code: "E_FORBIDDEN",
      message: expect.stringContaining("not in OUTBOUND_ALLOW"),
    });
    expect(outside.connections()).toBe(0);
    expect(pages.requests.length).toBe(requests);
  });

  it("without OUTBOUND_ALLOW nothing is reached, and the message names the variable", async () => {
    await expect(
      collectStream(server, snapshot, { url: `${pages.url}/` }, { env: { WEBCHECK_ARTIFACTS_DIR: dir } }),
    ).rejects.toMatchObject({ code: "E_FORBIDDEN", message: expect.stringContaining("OUTBOUND_ALLOW") });
  });

  it("one snapshot more than WEBCHECK_MAX_SNAPSHOTS is E_BUSY", async () => {
    const one = testRuntime(server, { env: { ...env, WEBCHECK_MAX_SNAPSHOTS: "1" } });
    try {
      const hangs = () => pages.requests.filter((r) => r === "GET /hang").length;
      const before = hangs();
      const controller = new AbortController();
      const hanging = snap({ url: `${pages.url}/hang` }, one, controller.signal).catch((e: { code: string }) => e.code);
      // The first holds its slot once its page is loading (it launches this runtime's browser first).
      await waitUntil(() => hangs() > before, "the first snapshot is loading its page");
      await expect(snap({ url: `${pages.url}/` }, one)).rejects.toMatchObject({ code: "E_BUSY" });
      controller.abort();
      expect(await hanging).toBe("E_TIMEOUT");
    } finally {
      await one.close();
    }
  });

  it("the browser closes after WEBCHECK_BROWSER_IDLE_MS without a snapshot", async () => {
    const idle = testRuntime(server, { env: { ...env, WEBCHECK_BROWSER_IDLE_MS: "300" } });
    try {
      const before = new Set(browserPids());
      const { messages } = await snap({ url: `${pages.url}/` }, idle);
      expect(messages[0]?.browser.cold).toBe(true);
      const launched = browserPids().filter((p) => !before.has(p));
      expect(launched).toHaveLength(1);
      const pid = launched[0] ?? 0;
      await waitUntil(() => !isLive(pid), "the idle browser closes");
      // The file's own warm browser is not this runtime's: it is still up.
      expect(browsersHere()).toBe(before.size);
      // Only our own files ever land in the artifacts dir.
      expect((await readdir(dir)).every((n) => /^snapshot-.*\.png$/.test(n))).toBe(true);
    } finally {
      await idle.close();
    }
  });
});
