/**
 * process_info against real processes: a child with a known argv by pid (every field exact or derived from
 * /proc independently), two children under a program name of their own by name, and the typed errors.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MASK } from "@roadnerd/conventions";
import { callTool } from "@roadnerd/conventions/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCgroupUnit } from "../../src/proc/cgroup-unit.ts";
import { server } from "../../src/server.ts";
import { processInfo } from "../../src/tools/process-info.ts";
import { HOLDER_CMD, HOLDER_SCRIPT, type Holder, leakedSecrets, NODE_EXE, startHolder } from "../helpers/holder.ts";

let holder: Holder;
let beforeSpawn: number;
let afterSpawn: number;
const unit = parseCgroupUnit(readFileSync("/proc/self/cgroup", "utf8")).unit;

beforeAll(async () => {
  beforeSpawn = Date.now();
  holder = await startHolder([]);
  afterSpawn = Date.now();
});

afterAll(async () => {
  await holder?.stop();
});

describe("process_info by pid", () => {
  it("answers every field of a child this test started", async () => {
    const r = await callTool(server, processInfo, { pid: holder.pid });
    expect(r.processes).toEqual([
      {
        pid: holder.pid,
        ppid: process.pid,
        name: "node",
        cmd: HOLDER_CMD,
        exe: NODE_EXE,
        user: "root",
        state: expect.stringMatching(/^[SR] \((sleeping|running)\)$/),
        rss_mb: expect.any(Number),
        started: expect.any(String),
        unit,
      },
    ]);
    const [p] = r.processes;
    // VmRSS from /proc/<pid>/status, read here independently (it moves a little between the two reads).
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${holder.pid}/status`, "utf8"))?.[1]);
    expect(Math.abs((p?.rss_mb ?? 0) - rssKb / 1024)).toBeLessThan(5);
    // Start time from starttime + btime: whole seconds of btime, so within a second of the spawn.
    const started = Date.parse(p?.started ?? "");
    expect(started).toBeGreaterThanOrEqual(beforeSpawn - 1000);
    expect(started).toBeLessThanOrEqual(afterSpawn + 1000);
    expect(p?.started).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(leakedSecrets(r)).toEqual([]);
    expect(r.summary).toMatch(
      new RegExp(`^node \\(pid ${holder.pid}\\) [SR] \\(\\w+\\), user root, [\\d.]+ MB, since `),
    );
  });

  it("shows a kernel thread's name in brackets, as ps does", async () => {
    const kthreadd = readFileSync("/proc/2/stat", "utf8").includes("(kthreadd)");
    const r = await callTool(server, processInfo, { pid: 2 });
    if (kthreadd)
      expect(r.processes[0]).toMatchObject({ pid: 2, name: "kthreadd", cmd: "[kthreadd]", exe: null, rss_mb: 0 });
    else expect(r.processes[0]?.pid).toBe(2);
  });

  it("refuses a pid that is not running with a typed error", async () => {
    let missing = 4_194_000;
    while (existsSync(`/proc/${missing}`)) missing += 1;
    await expect(callTool(server, processInfo, { pid: missing })).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
      message: `no process with pid ${missing} (it is not running)`,
    });
  });
});

describe("process_info by name", () => {
  let dir: string;
  let probes: Holder[] = [];
  beforeAll(async () => {
    // A program name of our own: a symlink to node is named rn-ports-probe in /proc/<pid>/stat.
    dir = mkdtempSync(join(tmpdir(), "rn-ports-"));
    symlinkSync(process.execPath, join(dir, "rn-ports-probe"));
    probes = [await startHolder([], { argv0: join(dir, "rn-ports-probe") })];
    probes.push(await startHolder([], { argv0: join(dir, "rn-ports-probe") }));
  });
  afterAll(async () => {
    await Promise.all(probes.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it("finds every process of that name, by pid, masked", async () => {
    const r = await callTool(server, processInfo, { name: "rn-ports-probe" });
    const pids = probes.map((p) => p.pid).sort((a, b) => a - b);
    expect(r.processes.map((p) => [p.pid, p.name, p.cmd, p.exe])).toEqual(
      pids.map((pid) => [
        pid,
        "rn-ports-probe",
        `${join(dir, "rn-ports-probe")} ${HOLDER_SCRIPT} --password=${MASK} token=${MASK} https://${MASK}@host.example/`,
        NODE_EXE,
      ]),
    );
    expect(r).toMatchObject({
      truncated: false,
      omitted: 0,
      summary: `2 processes: rn-ports-probe ${pids[0]}, rn-ports-probe ${pids[1]}`,
    });
    expect(leakedSecrets(r)).toEqual([]);
  });

  it("caps the list with limit", async () => {
    const r = await callTool(server, processInfo, { name: "rn-ports-probe", limit: 1 });
    expect(r.processes).toHaveLength(1);
    expect(r).toMatchObject({ truncated: true, omitted: 1 });
  });

  it("answers a name nothing runs under with an empty list, not an error", async () => {
    const r = await callTool(server, processInfo, { name: "rn-no-such-process" });
    expect(r).toMatchObject({ processes: [], truncated: false, omitted: 0, summary: "no such process is running" });
  });
});

describe("process_info input", () => {
  it.each<[Record<string, unknown>, string]>([
    [{}, "neither pid nor name"],
    [{ pid: 1, name: "node" }, "both"],
  ])("refuses %j (%s) with a hint", async (input) => {
    await expect(callTool(server, processInfo, input)).rejects.toMatchObject({
      code: "E_INVALID_INPUT",
      message: "process_info needs exactly one of pid and name",
      hint: expect.stringContaining('{"pid":1}'),
    });
  });
});
