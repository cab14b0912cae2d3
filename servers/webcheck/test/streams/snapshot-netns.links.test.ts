/**
 * The browser in a network namespace that holds nothing but what this test serves: the built server runs inside
 * it (and so does the Chromium it launches), with one veth to the test, where a page server listens on the
 * allowed address and an "outside" host on a second address that the namespace can route to but the allowlist
 * does not name. A redirect, an image and a WebSocket aimed at the outside host are refused by the proxy before
 * a packet leaves for it: the outside host accepts no connection.
 */

import { mkdtemp, rm } from "node:fs/promises";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { type AddressInfo, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNetnsLab, type NetnsLab, netnsSkipReason, type SpawnedServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAGE_TITLE, pageHandler } from "../helpers/pages.ts";

const skip = netnsSkipReason();

describe.skipIf(skip)(`snapshot from inside a network namespace${skip ? ` (skipped: ${skip})` : ""}`, () => {
  let lab: NetnsLab;
  let web: HttpServer;
  let outside: Server;
  let offered = 0;
  let server: SpawnedServer;
  let pageUrl: string;
  let dir: string;

  beforeAll(async () => {
    lab = createNetnsLab();
    dir = await mkdtemp(join(tmpdir(), "webcheck-netns-"));
    const ns = lab.addNs();
    const { nsAddr, rootAddr } = lab.linkToRoot(ns);
    // A second address on the test's end, reachable from the namespace, named by no allowlist.
    const outsideAddr = lab.freeLink30().rootAddr;
    lab.ip(null, "addr", "add", `${outsideAddr}/32`, "dev", lab.rootIfName("m1"));
    lab.ip(ns, "route", "add", `${outsideAddr}/32`, "via", rootAddr);
    outside = createServer((s) => {
      offered += 1;
      s.destroy();
    });
    await new Promise<void>((r) => outside.listen(0, outsideAddr, r));
    const elsewhere = `${outsideAddr}:${(outside.address() as AddressInfo).port}`;
    // The control: the namespace can reach the outside host, so the zero asserted below means something.
    lab.exec(ns, [
      process.execPath,
      "-e",
      `require("net").connect(${outside.address() ? (outside.address() as AddressInfo).port : 0}, "${outsideAddr}").on("connect", function () { this.destroy(); })`,
    ]);
    // A Node process starting in the namespace: seconds on a loaded machine. Bounded at 30 s.
    for (let i = 0; i < 600 && offered === 0; i += 1) await new Promise((r) => setTimeout(r, 50));
    if (offered !== 1)
      throw new Error("the outside host is not reachable from the namespace: the test would prove nothing");
    offered = 0;
    web = createHttpServer(pageHandler(elsewhere));
    await new Promise<void>((r) => web.listen(0, rootAddr, r));
    pageUrl = `http://${rootAddr}:${(web.address() as AddressInfo).port}`;
    server = await lab.serve(ns, "webcheck", {
      env: { HOST: nsAddr, OUTBOUND_ALLOW: `${rootAddr}/32`, WEBCHECK_ARTIFACTS_DIR: dir },
    });
  });

  afterAll(async () => {
    await lab?.cleanup();
    await new Promise<void>((r) => (web ? web.close(() => r()) : r()));
    outside?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function events(path: string): Promise<Array<{ event: string; data: Record<string, unknown> }>> {
    const res = await fetch(
      `${server.url}/sse/snapshot?url=${encodeURIComponent(`${pageUrl}${path}`)}&timeout_ms=50000&duration_ms=60000`,
      {
        headers: { authorization: `Bearer ${server.token}` },
      },
    );
    const text = await res.text();
    return text
      .trim()
      .split("\n\n")
      .map((b) => ({
        event: /^event: (.*)$/m.exec(b)?.[1] ?? "",
        data: JSON.parse(/^data: (.*)$/m.exec(b)?.[1] ?? "{}") as Record<string, unknown>,
      }))
      .filter((e) => e.event !== "ping");
  }

  it("screenshots the served page", async () => {
    const [message, end] = await events("/");
    expect(message).toMatchObject({ event: "message", data: { status: 200, title: PAGE_TITLE } });
    expect(end?.event).toBe("end");
  });

  it("a redirect, an image and a WebSocket to the outside host never reach it", async () => {
    const away = await events("/away");
    expect(away.map((e) => e.event)).toEqual(["error", "end"]);
    expect(away[0]?.data).toMatchObject({ code: "E_FORBIDDEN" });
    const [leaky] = await events("/leaky");
    expect(leaky?.data).toMatchObject({ title: "ws refused" });
    expect((leaky?.data.blocked_count as number) >= 2).toBe(true);
    expect(offered).toBe(0);
  });
});
