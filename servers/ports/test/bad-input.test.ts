/**
 * Bad input to every tool and the stream gets a 400 with a typed error and spawns nothing: the server runs
 * with SOCKETS_SOURCE=ss and EXEC_PATH holding only a fake `ss` that records each run, so any work at all
 * would leave a record (the first test proves the record works).
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testApp } from "@roadnerd/conventions/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "../src/server.ts";

let app: Awaited<ReturnType<typeof testApp>>;
let dir: string;
const ran = () => readFile(join(dir, "ran"), "utf8").catch(() => "");

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rn-ports-bad-"));
  await writeFile(join(dir, "ss"), `#!/bin/sh\necho "$@" >> "${dir}/ran"\n`);
  await chmod(join(dir, "ss"), 0o755);
  app = await testApp(server, { env: { EXEC_PATH: dir, SOCKETS_SOURCE: "ss" } });
});

afterAll(async () => {
  await app.close();
  await rm(dir, { recursive: true, force: true });
});

const post = (tool: string, body: unknown) =>
  app.inject({
    method: "POST",
    url: `/actions/${tool}`,
    headers: { "content-type": "application/json" },
    payload: JSON.stringify(body),
  });

const badPorts: Array<[string, unknown]> = [
  ["port 0", 0],
  ["port 65536", 65_536],
  ['port "80" (a string)', "80"],
  ["port -1", -1],
  ["port 1.5", 1.5],
  ["port null", null],
];

const perTool: Record<string, Array<[string, unknown]>> = {
  listening_sockets: [
    ["proto sctp", { proto: "sctp" }],
    ["limit 0", { limit: 0 }],
    ["limit 501", { limit: 501 }],
    ["an unknown key", { port: 80 }],
  ],
  who_uses_port: [["no port", {}], ...badPorts.map(([l, port]): [string, unknown] => [l, { port }])],
  process_info: [
    ["pid 0", { pid: 0 }],
    ["pid -5", { pid: -5 }],
    ["pid 1.5", { pid: 1.5 }],
    ['pid "1" (a string)', { pid: "1" }],
    ["pid above PID_MAX_LIMIT", { pid: 4_194_305 }],
    ["name with /", { name: "usr/bin/node" }],
    ["name ../", { name: "../etc" }],
    ["name of 300 chars", { name: "n".repeat(300) }],
    ["an empty name", { name: "" }],
    ["name with a shell metacharacter", { name: "node;id" }],
    ["name as a number", { name: 42 }],
  ],
};

describe("every ports tool refuses bad input with E_INVALID_INPUT and spawns nothing", () => {
  it("the record works: a valid call does run the fake ss", async () => {
    const res = await post("listening_sockets", {});
    expect(res.statusCode).toBe(200);
    expect(await ran()).toBe("-Hltnup\n");
    await rm(join(dir, "ran"));
  });

  for (const tool of server.tools) {
    it.each(perTool[tool.name] ?? [])(`${tool.name}: %s`, async (_label, body) => {
      const res = await post(tool.name, body);
      expect(res.statusCode).toBe(400);
      const error = res.json().error;
      expect(error.code).toBe("E_INVALID_INPUT");
      expect(error.message).toMatch(new RegExp(`^${tool.name}: `));
      expect(error.hint).toMatch(/^example: \{/);
      expect(await ran()).toBe("");
    });
  }

  it("has bad-input cases for every tool", () => {
    expect(Object.keys(perTool).sort()).toEqual(server.tools.map((t) => t.name).sort());
  });

  it.each([
    ["neither pid nor name", {}, "process_info needs exactly one of pid and name"],
    ["both pid and name", { pid: 1, name: "init" }, "process_info needs exactly one of pid and name"],
    ["a pid nothing runs as", { pid: 4_194_304 }, "no process with pid 4194304 (it is not running)"],
  ])("process_info: %s is a typed 400 from the handler", async (_label, body, message) => {
    const res = await post("process_info", body);
    expect([res.statusCode, res.json().error.code, res.json().error.message]).toEqual([
      400,
      "E_INVALID_INPUT",
      message,
    ]);
    expect(await ran()).toBe("");
  });

  it("the stream refuses the same ports and bad intervals before any event", async () => {
    for (const query of ["port=0", "port=65536", "port=-1", "port=1.5", "port=abc", "", "port=80&interval_ms=5"]) {
      const res = await app.inject({ method: "GET", url: `/sse/port_watch?${query}` });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error.code).toBe("E_INVALID_INPUT");
    }
    expect(await ran()).toBe("");
  });
});
