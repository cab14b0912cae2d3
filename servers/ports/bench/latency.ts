/**
 * Ports's per-tool latency against the command a user would type (`ss`, `ps`), measured the same way in the same
 * run, with the in-process floor (reading /proc/net/{tcp,tcp6,udp,udp6}, /proc/<pid>/*) as an informational line.
 * The server runs twice, with SOCKETS_SOURCE=proc (the default) and =ss, so the choice of source is measured,
 * not assumed. A TCP listener of this process is the port looked up. Used by `pnpm bench`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import type { BenchCall, BenchContext } from "@roadnerd/testkit";

/**
 * What process_info answers, as `ps` would be asked for it. By name: `ps -eo` (every process, for a grep), since
 * `ps -C node` finds nothing on Node ≥ 22, whose comm is "MainThread" (the tool also matches argv[0]'s name).
 */
const PS_FIELDS = "pid,ppid,user,stat,rss,etime,args";
const TABLES = ["tcp", "tcp6", "udp", "udp6"].map((t) => `/proc/net/${t}`);

const readTables = () => Promise.all(TABLES.map((t) => readFile(t, "utf8")));

/** The bare cost of finding holders: every /proc/<pid>/fd link read, synchronously. */
function scanFds(): number {
  let n = 0;
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      n += readdirSync(`/proc/${pid}/fd`).length;
    } catch {}
  }
  return n;
}

export async function benchLatency(b: BenchContext): Promise<void> {
  const tcp = createServer((s) => s.destroy());
  await new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r));
  const port = (tcp.address() as AddressInfo).port;
  const viaProc = await b.start({});
  const viaSs = await b.start({ SOCKETS_SOURCE: "ss" });
  try {
    const ss = ["ss", "-Hltnup"];
    const ssSport = ["ss", "-Hltnp", "sport", "=", `:${port}`];
    const listening = () => b.call(viaProc, "listening_sockets", {});
    await b.pairCommand("listening_sockets", listening, ss);
    await b.pair("listening_sockets", listening, "read /proc/net/{tcp,udp}{,6}", readTables, { floor: true });
    // SOCKETS_SOURCE=ss runs the command it is compared with: how much the choice of source costs, for information.
    await b.pairCommand("listening_sockets (ss)", () => b.call(viaSs, "listening_sockets", {}), ss, { info: true });
    const who = () => b.call(viaProc, "who_uses_port", { port });
    await b.pairCommand("who_uses_port", who, ssSport);
    await b.pairCommand("who_uses_port (ss)", () => b.call(viaSs, "who_uses_port", { port }), ssSport, { info: true });
    await b.pair("who_uses_port", who, `/proc/*/fd scan (${scanFds()} fds)`, async () => scanFds(), { floor: true });
    const byPid = () => b.call(viaProc, "process_info", { pid: process.pid });
    await b.pairCommand("process_info {pid}", byPid, ["ps", "-o", PS_FIELDS, "-p", String(process.pid)]);
    await b.pair(
      "process_info {pid}",
      byPid,
      "read /proc/<pid>/stat+status+cmdline",
      async () => ["stat", "status", "cmdline"].map((f) => readFileSync(`/proc/${process.pid}/${f}`, "utf8")),
      { floor: true },
    );
    const byName = () => b.call(viaProc, "process_info", { name: "node" });
    await b.pairCommand("process_info {name}", byName, ["ps", "-eo", PS_FIELDS]);
    await b.pair(
      "process_info {name}",
      byName,
      "read every /proc/<pid>/stat",
      async () =>
        readdirSync("/proc")
          .filter((p) => /^\d+$/.test(p))
          .map((p) => {
            try {
              return readFileSync(`/proc/${p}/stat`, "utf8");
            } catch {
              return "";
            }
          }),
      { floor: true },
    );
  } finally {
    viaProc.kill();
    viaSs.kill();
    tcp.close();
  }
}

/** A cheap call for the /mcp vs /actions comparison: who holds a listener of this process. */
export async function cheapCall(): Promise<BenchCall> {
  const tcp = createServer((s) => s.destroy());
  await new Promise<void>((r) => tcp.listen(0, "127.0.0.1", r));
  return { tool: "who_uses_port", args: { port: (tcp.address() as AddressInfo).port }, close: () => tcp.close() };
}
