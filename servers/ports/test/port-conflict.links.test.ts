/**
 * The roadmap's port_conflict_8080 scenario, for real: inside a network namespace this test creates, a process
 * already holds 8080; the ports server started inside the same namespace names it. The server reports its own
 * namespace: from here (another namespace) the same port is free.
 */
import { readFileSync, readlinkSync } from "node:fs";
import { createClient, type RoadNerdClient } from "@roadnerd/client";
import type { ResultOf } from "@roadnerd/conventions";
import { callTool } from "@roadnerd/conventions/testing";
import { createNetnsLab, type NetnsLab, netnsSkipReason } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCgroupUnit } from "../src/proc/cgroup-unit.ts";
import { server } from "../src/server.ts";
import type { listeningSockets } from "../src/tools/listening-sockets.ts";
import { whoUsesPort } from "../src/tools/who-uses-port.ts";
import { HOLDER_CMD, type Holder, leakedSecrets, NODE_EXE, startHolder } from "./helpers/holder.ts";

const skip = netnsSkipReason();

describe.skipIf(skip)(`8080 already in use inside a network namespace${skip ? ` (skipped: ${skip})` : ""}`, () => {
  let lab: NetnsLab;
  let ns: string;
  let holder: Holder;
  let client: RoadNerdClient;
  let serverPid: number;
  let serverLocal: string;

  beforeAll(async () => {
    lab = createNetnsLab();
    try {
      ns = lab.addNs();
      const { nsAddr } = lab.linkToRoot(ns);
      holder = await startHolder(
        [
          { proto: "tcp", host: "0.0.0.0", port: 8080 },
          { proto: "tcp6", host: "::1", port: 8080 },
        ],
        { wrap: lab.wrap(ns) },
      );
      const served = await lab.serve(ns, "ports", { env: { HOST: nsAddr } });
      client = createClient(served.url, { token: served.token });
      serverPid = served.pid;
      serverLocal = new URL(served.url).host;
    } catch (err) {
      await holder?.stop();
      await lab.cleanup();
      throw err;
    }
  });

  afterAll(async () => {
    await holder?.stop();
    await lab?.cleanup();
  });

  it("who_uses_port 8080 names the holder's pid, process, masked command and sockets", async () => {
    const r = await client.call<ResultOf<typeof whoUsesPort>>("who_uses_port", { port: 8080 });
    expect(r.in_use).toBe(true);
    expect(r.pids).toEqual([
      {
        pid: holder.pid,
        process: "node",
        cmd: HOLDER_CMD,
        exe: NODE_EXE,
        unit: parseCgroupUnit(readFileSync("/proc/self/cgroup", "utf8")).unit,
        user: "root",
        sockets: [
          { proto: "tcp", local: "0.0.0.0:8080" },
          { proto: "tcp6", local: "[::1]:8080" },
        ],
      },
    ]);
    expect(r.unowned).toEqual([]);
    // A holder systemd runs points at its unit; one outside any service points nowhere.
    const unit = r.pids[0]?.unit;
    expect(r.next).toEqual(
      unit ? { tool: "service/service_status", args: { name: unit }, why: `${unit} holds port 8080` } : undefined,
    );
    expect(r.netns).toBe(readlinkSync(`/proc/${holder.pid}/ns/net`));
    expect(r.netns).not.toBe(readlinkSync("/proc/self/ns/net"));
    expect(r.summary).toBe(`port 8080 is held by node (pid ${holder.pid}) on tcp 0.0.0.0:8080, tcp6 [::1]:8080`);
    expect(leakedSecrets(r)).toEqual([]);
  });

  it("listening_sockets inside the namespace shows 8080 and the server's own port, nothing else", async () => {
    const r = await client.call<ResultOf<typeof listeningSockets>>("listening_sockets", {});
    const serverPort = Number(serverLocal.split(":")[1]);
    const expected = [
      { proto: "tcp", local: "0.0.0.0:8080", port: 8080, pid: holder.pid, process: "node", holders: 1 },
      { proto: "tcp6", local: "[::1]:8080", port: 8080, pid: holder.pid, process: "node", holders: 1 },
      { proto: "tcp", local: serverLocal, port: serverPort, pid: serverPid, process: "node", holders: 1 },
    ].sort((a, b) => a.port - b.port);
    expect(r.sockets).toEqual(expected);
  });

  it("from this test's own namespace the holder is not seen: each server reports the namespace it runs in", async () => {
    // Other suites may hold 8080 in the shared test namespace; the namespaced holder must not appear.
    const here = await callTool(server, whoUsesPort, { port: 8080 });
    expect(here.pids.map((p) => p.pid)).not.toContain(holder.pid);
    expect(here.netns).toBe(readlinkSync("/proc/self/ns/net"));
  });
});
