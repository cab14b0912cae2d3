/**
 * The gateway's page in a real browser (Debian's Chromium through playwright-core, as webcheck launches it),
 * against the real gateway and real attached servers inside the sealed test world (loopback only): the page
 * loads from our origin alone, a triage ends with the right label on screen, the live panels fill, and the
 * guards (Host, Origin, cross-site, token) hold for the page and its API. PAGE_SCREENSHOT_DIR keeps the
 * screenshots for review.
 */
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT, readRegistry } from "@roadnerd/registry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// Types by path: playwright-core is installed beside webcheck (its runtime dependency), not the orchestrator.
import type { Browser, Page } from "../../../servers/webcheck/node_modules/playwright-core/index.js";
import { Attacher } from "../src/attach.ts";
import { type Catalog, loadCatalog } from "../src/catalog.ts";
import { type GatewayHttp, serveGatewayHttp } from "../src/gateway-http.ts";
import { RulesPlanner } from "../src/planners/rules.ts";

// playwright-core is webcheck's runtime dependency; the test borrows it from there rather than pin a second copy.
const { chromium } = createRequire(join(REPO_ROOT, "servers/webcheck/package.json"))(
  "playwright-core",
) as typeof import("../../../servers/webcheck/node_modules/playwright-core/index.js");

const TOKEN = "page-test-token-0123456789";
const shotDir = process.env.PAGE_SCREENSHOT_DIR;

function chromiumPath(): string {
  for (const dir of (process.env.PATH ?? "").split(":").concat("/usr/bin")) {
    try {
      accessSync(join(dir, "chromium"), constants.X_OK);
      return join(dir, "chromium");
    } catch {
      // not here
    }
  }
  throw new Error("chromium not found (Debian: apt-get install chromium)");
}

/** A raw request with chosen headers (fetch would set Host and Origin itself). */
function raw(url: string, headers: Record<string, string>, method = "GET"): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let body = "";
      res.on("data", (c) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

let catalog: Catalog;
let attacher: Attacher;
let gateway: GatewayHttp;
let origin: string;
let browser: Browser;
// webcheck's artifacts directory in this world: the test puts a screenshot there for the page to show.
const artifacts = mkdtempSync(join(tmpdir(), "rn-page-artifacts-"));

beforeAll(async () => {
  catalog = await loadCatalog();
  attacher = new Attacher({
    servers: readRegistry(),
    envFor: (server): Record<string, string> => (server === "webcheck" ? { WEBCHECK_ARTIFACTS_DIR: artifacts } : {}),
  });
  gateway = await serveGatewayHttp({ catalog, attacher, planner: () => new RulesPlanner() });
  origin = gateway.url.replace(/\/mcp$/, "");
  browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: ["--disable-gpu"] });
});

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
  await attacher?.close();
  rmSync(artifacts, { recursive: true, force: true });
});

async function openPage(url: string): Promise<{ page: Page; foreign: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const foreign: string[] = [];
  page.on("request", (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith("blob:")) foreign.push(r.url());
  });
  await page.goto(url);
  return { page, foreign };
}

const shot = async (page: Page, name: string) => {
  if (shotDir) await page.screenshot({ path: join(shotDir, `${name}.png`), fullPage: true });
};

describe("the gateway's page in Chromium", () => {
  it("loads from our origin alone, lists every server, and fills the disk and ports panels", async () => {
    const { page, foreign } = await openPage(`${origin}/`);
    expect(await page.title()).toBe("RoadNerd");
    await page
      .locator("#servers li")
      .nth(catalog.servers.length - 1)
      .waitFor();
    expect(await page.locator("#servers li").count()).toBe(catalog.servers.length);
    // disk_usage and listening_sockets ran on load (their servers attached on the first call).
    await page.locator("#disk-mounts .mount .bar").first().waitFor();
    await page.locator("#ports-rows tr").first().waitFor();
    await shot(page, "page-loaded");
    expect(foreign).toEqual([]);
    await page.close();
  });

  it("has its icon from our origin, allowed by the CSP: nothing answered 404, no console error", async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    const failed: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    page.on("response", (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
    });
    await page.goto(`${origin}/`);
    await page
      .locator("#servers li")
      .nth(catalog.servers.length - 1)
      .waitFor();
    expect(await page.locator('link[rel="icon"]').getAttribute("href")).toBe("/favicon.svg");
    // Loaded as an image under the page's own CSP, as the tab's icon is; /favicon.ico answers the same.
    // In the page's own words (the test's TypeScript has no DOM types): each icon's width once loaded, -1 if refused.
    const sizes = await page.evaluate<number[]>(`Promise.all(["/favicon.svg", "/favicon.ico"].map((src) =>
      new Promise((resolve) => { const img = new Image(); img.onload = () => resolve(img.naturalWidth);
        img.onerror = () => resolve(-1); img.src = src; })))`);
    expect(
      sizes.every((w) => w > 0),
      String(sizes),
    ).toBe(true);
    expect(failed).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("a triage in this world (no interface up) ends with the label wifi on screen, its steps listed", async () => {
    const { page } = await openPage(`${origin}/`);
    await page.fill("#symptom", "no internet");
    await page.click("#triage-run");
    await page.locator("#triage-verdict:not([hidden])").waitFor({ timeout: 60_000 });
    expect(await page.locator("#triage-label").textContent()).toBe("wifi");
    expect(await page.locator("#triage-reason").textContent()).toContain("no interface is up with a carrier");
    const steps = await page.locator("#triage-steps li").count();
    expect(steps).toBeGreaterThan(0);
    expect(await page.locator("#triage-reason").textContent()).toContain(`(${steps} tool call`);
    expect(await page.locator("#triage-evidence li").count()).toBe(steps);
    await shot(page, "page-triage-wifi");
    await page.close();
  });

  it("a port held by a process: triage says port_conflict and the ports table shows the holder", async () => {
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    const address = holder.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      const { page } = await openPage(`${origin}/`);
      await page.fill("#symptom", `port ${port} already in use`);
      await page.click("#triage-run");
      await page.locator("#triage-verdict:not([hidden])").waitFor({ timeout: 60_000 });
      expect(await page.locator("#triage-label").textContent()).toBe("port_conflict");
      await page.click("#ports-refresh");
      const row = page.locator("#ports-rows tr", { hasText: String(port) });
      await row.first().waitFor();
      expect(await row.first().textContent()).toContain(String(process.pid));
      await shot(page, "page-triage-port");
      await page.close();
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it("connectivity rounds as a timeline, where the space went as a picture, webcheck's screenshot and TLS refusal", async () => {
    const { page } = await openPage(`${origin}/`);
    await page.click("#watch-toggle");
    await page.locator('.cells[data-probe="gateway"] .cell').first().waitFor({ timeout: 30_000 });
    // No default route in this world: the gateway probe fails.
    expect(await page.locator('.cells[data-probe="gateway"] .cell.bad').count()).toBeGreaterThan(0);
    expect(await page.locator("#watch-now").textContent()).toMatch(/round \d+: gateway failing/);
    await page.click("#watch-toggle");
    await page.fill("#consumers-path", "/tmp");
    await page.click("#consumers-form button");
    await page.locator("#consumers .legend").waitFor({ timeout: 30_000 });
    expect(await page.locator("#consumers p").first().textContent()).toMatch(/^\/tmp: .* in all$/);
    // A screenshot in webcheck's directory (named as webcheck names them) is shown as an image.
    writeFileSync(join(artifacts, "snapshot-2026-01-01T00-00-00-000Z-0123abcd.png"), await page.screenshot());
    await page.click("#shots-refresh");
    const img = page.locator("#shots img");
    await img.first().waitFor();
    // Polled from outside (CDP evaluation): waitForFunction evaluates inside the page, which the page's CSP refuses.
    await expect
      .poll(() => page.evaluate("document.querySelector('#shots img').naturalWidth"), { timeout: 30_000 })
      .toBe(1200);
    // webcheck reaches nothing until OUTBOUND_ALLOW names it: the verdict says so, with the fix.
    await page.fill("#tls-url", "https://127.0.0.1:9/");
    await page.click("#tls-form button");
    await page.locator("#tls-verdict .error").waitFor({ timeout: 30_000 });
    expect(await page.locator("#tls-verdict .error").textContent()).toMatch(/^E_FORBIDDEN: .*OUTBOUND_ALLOW/);
    await shot(page, "page-watch-disk");
    await page.close();
  });
});

describe("the page's guards", () => {
  it("refuses a foreign Host, a foreign Origin and a cross-site read of the API", async () => {
    const host = new URL(origin).host;
    expect((await raw(`${origin}/`, { host: "evil.example" })).status).toBe(403);
    expect((await raw(`${origin}/api/servers`, { host, origin: "http://evil.example" })).status).toBe(403);
    expect((await raw(`${origin}/api/servers`, { host, "sec-fetch-site": "cross-site" })).status).toBe(403);
    const page = await raw(`${origin}/`, { host });
    expect(page.status).toBe(200);
    // Every asset from our own origin: no src or href that is not a path of ours.
    expect(page.body.match(/(?:src|href)="[^"]*"/g)).toEqual([
      'href="/favicon.svg"',
      'href="/page.css"',
      'src="/page.js"',
    ]);
  });

  it("a body that is not a JSON object is a typed 400, too large a 413, not E_INTERNAL or a reset (attacker review)", async () => {
    const host = new URL(origin).host;
    const post = (body: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          `${origin}/api/call/storage/disk_usage`,
          { method: "POST", headers: { host, "content-type": "application/json" } },
          (res) => {
            let text = "";
            res.on("data", (c) => {
              text += c;
            });
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    const array = await post("[1,2]");
    expect(array.status).toBe(400);
    expect(JSON.parse(array.body).error).toMatchObject({
      code: "E_INVALID_INPUT",
      message: expect.stringContaining("object"),
    });
    const big = await post(JSON.stringify({ path: "x".repeat(200_000) }));
    expect(big.status).toBe(413);
    expect(JSON.parse(big.body).error).toMatchObject({
      code: "E_TOO_LARGE",
      message: expect.stringContaining("larger"),
    });
  });

  // Regression (sealed attacker review F11): an E_INVALID_INPUT or E_FORBIDDEN from /api/call came with HTTP 200.
  it("/api/call answers each error with its code's own status, as /actions does; the body still says it", async () => {
    const host = new URL(origin).host;
    const post = (path: string, body: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          `${origin}/api/call/${path}`,
          { method: "POST", headers: { host, "content-type": "application/json" } },
          (res) => {
            let text = "";
            res.on("data", (c) => {
              text += c;
            });
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    const invalid = await post("network/dns_resolve", JSON.stringify({ qname: "example.com", nope: 1 }));
    expect(invalid.status).toBe(400);
    expect(JSON.parse(invalid.body).error).toMatchObject({ code: "E_INVALID_INPUT" });
    const forbidden = await post("network/http_check", JSON.stringify({ url: "http://169.254.169.254/latest/" }));
    expect(JSON.parse(forbidden.body).error).toMatchObject({ code: "E_FORBIDDEN" });
    expect(forbidden.status).toBe(403);
  });

  it("with a token, the page needs ?token= and its API the bearer; the page sends it itself", async () => {
    const guarded = await serveGatewayHttp({ catalog, attacher, planner: () => new RulesPlanner(), token: TOKEN });
    const base = guarded.url.replace(/\/mcp$/, "");
    const host = new URL(base).host;
    try {
      expect((await raw(`${base}/`, { host })).status).toBe(401);
      expect((await raw(`${base}/api/servers`, { host })).status).toBe(401);
      expect((await raw(`${base}/mcp`, { host }, "POST")).status).toBe(401);
      expect((await raw(`${base}/healthz`, { host })).status).toBe(200);
      const ok = await raw(`${base}/api/servers`, { host, authorization: `Bearer ${TOKEN}` });
      expect(JSON.parse(ok.body).servers).toHaveLength(catalog.servers.length);
      const tab = await browser.newPage();
      await tab.goto(`${base}/?token=${TOKEN}`);
      await tab.locator("#servers li").first().waitFor();
      expect(await tab.locator("#servers li").count()).toBe(catalog.servers.length);
      await tab.close();
    } finally {
      await guarded.close();
    }
  });
});
