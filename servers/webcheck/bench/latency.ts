/**
 * Webcheck's latency against the command a user would type, on loopback: head vs `curl -I`, tls_info vs
 * `openssl s_client` (with one fetch HEAD and one raw tls.connect handshake as informational floors), and the snapshot cold (the first, which launches Chromium) and warm (the 2nd..5th),
 * with the server's and the browser's memory read from /proc. Used by `pnpm bench`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "node:tls";
import { type BenchCall, type BenchContext, generateTestCerts, startTestServer } from "@roadnerd/testkit";

const PAGE = "<!doctype html><title>bench</title><body style='background:#08c'><h1>bench page</h1></body>";

/** pid → parent pid, for every process. */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = /^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${entry}/status`, "utf8"))?.[1];
      if (ppid) out.set(Number(entry), Number(ppid));
    } catch {
      // gone
    }
  }
  return out;
}

/** Memory in MiB summed over processes: RSS (shared pages counted in each) or PSS (shared pages split). */
function memOf(pids: readonly number[], kind: "Rss" | "Pss"): number {
  let kb = 0;
  for (const pid of pids) {
    try {
      kb += Number(
        new RegExp(`^${kind}:\\s+(\\d+) kB$`, "m").exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? 0,
      );
    } catch {
      // gone
    }
  }
  return Math.round(kb / 1024);
}

function descendants(root: number): number[] {
  const tree = parents();
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of tree) {
      if (parent === p) {
        out.push(child);
        walk(child);
      }
    }
  };
  walk(root);
  return out;
}

/** The bench's own lines, beside the pairs the context prints. */
function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export async function benchLatency(b: BenchContext): Promise<void> {
  const certs = await generateTestCerts();
  const web = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(PAGE));
  await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
  const webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  const tls = await startTestServer((_req, res) => res.end("ok"), { tls: certs.valid });
  const dir = await mkdtemp(join(tmpdir(), "webcheck-bench-"));
  const srv = await b.start({
    OUTBOUND_ALLOW: "127.0.0.1",
    WEBCHECK_ARTIFACTS_DIR: dir,
    WEBCHECK_CA_FILE: certs.caFile,
  });
  try {
    const head = () => b.call(srv, "head", { url: `${webUrl}/` });
    await b.pairCommand("head", head, ["curl", "-sS", "-I", "-o", "/dev/null", "-w", "%{http_code}", `${webUrl}/`]);
    await b.pair(
      "head",
      head,
      "fetch HEAD (undici)",
      async () => (await fetch(`${webUrl}/`, { method: "HEAD" })).arrayBuffer(),
      { floor: true },
    );
    const tlsInfo = () => b.call(srv, "tls_info", { url: `${tls.url}/` });
    await b.pairCommand("tls_info", tlsInfo, [
      "openssl",
      "s_client",
      "-brief",
      "-CAfile",
      certs.caFile,
      "-connect",
      `127.0.0.1:${tls.port}`,
    ]);
    await b.pair(
      "tls_info",
      tlsInfo,
      "tls.connect handshake",
      () =>
        new Promise<void>((resolve, reject) => {
          const s = connect({ host: "127.0.0.1", port: tls.port, rejectUnauthorized: false }, () => {
            s.getPeerCertificate(true);
            s.destroy();
            resolve();
          });
          s.once("error", reject);
        }),
      { floor: true },
    );
    const rssBefore = memOf([srv.pid], "Rss");
    const shot = async () => {
      const text = await (await fetch(`${srv.url}/sse/snapshot?url=${encodeURIComponent(`${webUrl}/`)}`)).text();
      if (!text.includes("event: message")) throw new Error(`snapshot failed: ${text.slice(0, 300)}`);
    };
    const cold = await timed(shot);
    const warm: number[] = [];
    for (let i = 0; i < 4; i += 1) warm.push(await timed(shot));
    const browser = descendants(srv.pid);
    const mean = warm.reduce((a, x) => a + x, 0) / warm.length;
    say(
      `  snapshot (SSE, whole)  cold ${cold.toFixed(0)} ms (launches Chromium) | warm 2nd..5th ${warm.map((w) => w.toFixed(0)).join(", ")} ms (mean ${mean.toFixed(0)}) | ×${(cold / mean).toFixed(1)} cold/warm`,
    );
    say(
      `  memory                 server ${rssBefore} → ${memOf([srv.pid], "Rss")} MiB RSS | warm browser ${memOf(browser, "Pss")} MiB PSS (${memOf(browser, "Rss")} MiB RSS summed) over ${browser.length} processes`,
    );
  } finally {
    // SIGTERM, not the bench's SIGKILL: on exit the server takes its browser's profile and HOME with it.
    const exited = new Promise((r) => srv.child.once("exit", r));
    srv.child.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    srv.kill();
    web.close();
    await tls.close();
    await certs.cleanup();
    await rm(dir, { recursive: true, force: true });
  }
}

/** A cheap call for the /mcp vs /actions comparison: HEAD of a local page (needs OUTBOUND_ALLOW=127.0.0.1). */
export async function cheapCall(): Promise<BenchCall> {
  const web = createServer((_req, res) => res.end("ok"));
  await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
  return {
    tool: "head",
    args: { url: `http://127.0.0.1:${(web.address() as AddressInfo).port}/` },
    close: () => web.close(),
  };
}
