/**
 * The built `roadnerd` bin: list, call (pretty, --json, near-miss names, bad input), triage --json with
 * live progress on stderr, and `up` starting every server plus the gateway and stopping them all on SIGINT.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isLive } from "@roadnerd/conventions/testing";
import { REPO_ROOT, readRegistry } from "@roadnerd/registry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const BIN = join(REPO_ROOT, "packages/orchestrator/dist/main.js");
// Room for a loaded machine: servers may take many seconds to start, and no assertion rests on how long.
const ENV = { PATH: process.env.PATH ?? "/usr/bin:/bin", ROADNERD_ATTACH_TIMEOUT_MS: "120000" };
/** A call's own deadline, long enough that a loaded machine answers the tool's verdict, not a timeout. */
const ROOM = "timeout_ms=15000";
const ROOM_FLAG = "--timeout-ms=15000";
let logDir: string;

beforeAll(async () => {
  logDir = await mkdtemp(join(tmpdir(), "rn-cli-"));
});
afterAll(async () => {
  await rm(logDir, { recursive: true, force: true });
});

function roadnerd(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...ENV, ...env }, timeout: 150_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe("roadnerd list / call", () => {
  it("list: one line per tool, `<server>/<tool> {params}: summary`, then the streams; --json the same as data", async () => {
    const text = await roadnerd(["list"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("network/dns_resolve {qname, type?, server?}: Look up a DNS name");
    const [tools = "", streams = ""] = text.stdout.trim().split("\n\nstreams");
    // Where `roadnerd up` serves each stream, with its params.
    expect(streams).toMatch(
      /\nports\/port_watch \{port, interval_ms\?, duration_ms\?\}: .* http:\/\/127\.0\.0\.1:7103\/sse\/port_watch\n/,
    );
    const json = await roadnerd(["list", "--json"]);
    const entries = JSON.parse(json.stdout) as Array<{
      tool?: string;
      stream?: string;
      params: string[];
      port?: number;
    }>;
    expect(entries.find((e) => e.tool === "ports/who_uses_port")?.params).toEqual(["port"]);
    expect(entries.find((e) => e.stream === "ports/port_watch")).toMatchObject({
      params: ["port", "interval_ms?", "duration_ms?"],
      port: 7103,
    });
    expect(entries.filter((e) => e.tool)).toHaveLength(tools.split("\n").length);
    expect(entries.filter((e) => e.stream)).toHaveLength(streams.trim().split("\n").length - 1);
  });

  it("call --json: the tool's result; key=value params typed (port=9 is a number)", async () => {
    const r = await roadnerd(["call", "ports/who_uses_port", "port=9", "run_id=cli-1", ROOM, "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ port: 9, in_use: false, pids: [], run_id: "cli-1" });
  });

  it("call pretty: summary line then the fields; a near-miss name is resolved and said", async () => {
    const r = await roadnerd(["call", "network.route_info", ROOM]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("(network.route_info → network/route_info)");
    // No `up` here: the command started its own network server and says so when it stops it.
    expect(r.stderr).toMatch(/\(network: stopped the copy started for this command, pid \d+\)/);
    expect(r.stdout.split("\n")[0]).toBe(
      "no default route (IPv4 or IPv6): only local networks are reachable; 0 routes",
    );
    expect(r.stdout).toContain("  default_gateway: none\n");
  });

  it("call pretty: a list as a compact table, not indented JSON; --json keeps everything", async () => {
    const r = await roadnerd(["call", "storage/disk_usage", ROOM]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    // The columns that vary from row to row, as many as fit: the mount first, its size among them.
    const header = lines.findIndex((l) => /^ {2}mount {2,}\S.* total_gb\b/.test(l));
    expect(header).toBeGreaterThan(0);
    expect(lines[header - 1]).toMatch(/^mounts \(\d+\):$/);
    expect(lines[header + 1]).toMatch(/^ {2}\/\S* {2,}\S/);
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(120);
    expect(lines.length).toBeLessThan(35);
    expect(r.stdout).not.toContain("{");
    // A count says what it counts, from the tool's schema.
    expect(r.stdout).toMatch(/^ {2}hidden: \d+ \(pseudo filesystems, images and 0-block mounts left out\)$/m);
  });

  it("a tool param given as a flag (--path /tmp) is a usage error that shows the key=value it meant", async () => {
    const r = await roadnerd(["call", "storage/top_consumers", "--path", "/tmp"]);
    expect([r.code, r.stderr.split("\n")[0]]).toEqual([
      2,
      "--path: not a flag of `roadnerd call`; tool params are key=value words: path=/tmp (roadnerd --help for usage)",
    ]);
  });

  it("--version, roadnerd help <command> and <command> --help; the exit codes are in the help", async () => {
    const [version, help, flag, all, unknown] = await Promise.all([
      roadnerd(["--version"]),
      roadnerd(["help", "call"]),
      roadnerd(["call", "--help"]),
      roadnerd(["--help"]),
      roadnerd(["help", "frobnicate"]),
    ]);
    expect([version.code, version.stdout]).toEqual([0, "roadnerd 0.1.0\n"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(
      /^usage: roadnerd call <server>\/<tool> \[key=value …\] \[--host <name>\] \[--json\]\n/,
    );
    expect(flag.stdout).toBe(help.stdout);
    expect(all.stdout).toContain("exit: 0 done · 1 the work failed · 2 usage or invalid input");
    expect(all.stdout).toContain('roadnerd triage [symptom words | --symptom "…"] [--planner');
    expect(all.stdout).toContain('--json: the result on stdout as one JSON document; a failure too, as {"error"');
    // The name `up` gives itself (test/first-command.test.ts signals it by that name).
    expect(all.stdout).toContain('ps shows it as "roadnerd up"');
    expect(unknown.code).toBe(2);
  }, 150_000);

  it("call with an unknown tool or bad params: exit 2, the code, closest names, nothing spawned", async () => {
    const unknown = await roadnerd(["call", "network/ping", "host=example.com"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("E_UNKNOWN_TOOL: no tool named network/ping (closest:");
    const bad = await roadnerd(["call", "network/dns_resolve"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^E_INVALID_INPUT: network\/dns_resolve: qname/);
    expect(bad.stderr).not.toContain("attached");
  });
});

describe("output into a pipe that closes", () => {
  it("`roadnerd list | head -n 1` ends quietly when its reader goes away (no EPIPE stack)", async () => {
    const child = spawn(process.execPath, [BIN, "list"], { env: ENV, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    // The reader takes the first line and goes, as head does.
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise<number | null>((r) => child.once("close", (c) => r(c)));
    expect(stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(code).toBe(0);
  });
});

describe("one exit-code table", () => {
  /** A stand-in ports server on 127.0.0.1 (used as a configured remote server) answering what `answer` says. */
  let standIn: Server;
  let answer = { status: 200, body: {} };
  let env: Record<string, string>;
  /** The bodies of the tool calls the stand-in was sent, newest last. */
  const sent: unknown[] = [];

  beforeAll(async () => {
    standIn = createServer((req, res) => {
      let body = "";
      req.on("data", (d: Buffer) => {
        body += d.toString();
      });
      req.on("end", () => {
        if (req.url?.startsWith("/actions/")) sent.push(JSON.parse(body));
        const reply = req.url === "/healthz" ? { status: 200, body: { ok: true, name: "roadnerd-ports" } } : answer;
        res.writeHead(reply.status, { "content-type": "application/json" }).end(JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((r) => standIn.listen(0, "127.0.0.1", () => r()));
    const { port } = standIn.address() as AddressInfo;
    env = { ROADNERD_SERVER_PORTS_URL: `http://127.0.0.1:${port}` };
  });
  afterAll(() => {
    standIn?.close();
  });

  it("E_INVALID_INPUT exits 2 whether the CLI or the server catches it; the server's other failures exit 1", async () => {
    const local = await roadnerd(["call", "ports/who_uses_port", "port=0"], env);
    expect([local.code, local.stderr]).toEqual([
      2,
      expect.stringMatching(/^E_INVALID_INPUT: ports\/who_uses_port: port/),
    ]);
    answer = { status: 400, body: { error: { code: "E_INVALID_INPUT", message: "port: not served here" } } };
    const server = await roadnerd(["call", "ports/who_uses_port", "port=8080"], env);
    expect([server.code, server.stderr]).toEqual([2, "E_INVALID_INPUT: port: not served here\n"]);
    answer = { status: 504, body: { error: { code: "E_TIMEOUT", message: "ss did not answer" } } };
    const timeout = await roadnerd(["call", "ports/who_uses_port", "port=8080", "--json"], env);
    expect(timeout.code).toBe(1);
    // Without a deadline of its own, the call is told how to give it more room (ADR 0054).
    expect(JSON.parse(timeout.stdout)).toEqual({
      error: { code: "E_TIMEOUT", message: "ss did not answer", hint: expect.stringContaining("ROADNERD_TIMEOUT_MS") },
    });
    const given = await roadnerd(["call", "ports/who_uses_port", "port=8080", "timeout_ms=900", "--json"], env);
    expect(JSON.parse(given.stdout)).toEqual({ error: { code: "E_TIMEOUT", message: "ss did not answer" } });
    // Three runs of the bin: room for a loaded machine (the assertions are about exit codes, not time).
  }, 150_000);

  it("ROADNERD_TIMEOUT_MS is the timeout_ms call sends when none is given; the args' own wins; a bad one exits 2", async () => {
    const free = { port: 8080, in_use: false, pids: [], unowned: [], note: null, connections: {}, source: "proc" };
    answer = { status: 200, body: { ...free, netns: "net:[1]", summary: "nothing listens on port 8080" } };
    sent.length = 0;
    expect(
      (await roadnerd(["call", "ports/who_uses_port", "port=8080"], { ...env, ROADNERD_TIMEOUT_MS: "4321" })).code,
    ).toBe(0);
    expect(
      (
        await roadnerd(["call", "ports/who_uses_port", "port=8080", "timeout_ms=900"], {
          ...env,
          ROADNERD_TIMEOUT_MS: "4321",
        })
      ).code,
    ).toBe(0);
    expect((await roadnerd(["call", "ports/who_uses_port", "port=8080"], env)).code).toBe(0);
    expect(sent).toEqual([{ port: 8080, timeout_ms: 4321 }, { port: 8080, timeout_ms: 900 }, { port: 8080 }]);
    const bad = await roadnerd(["call", "ports/who_uses_port", "port=8080"], { ...env, ROADNERD_TIMEOUT_MS: "20" });
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/ROADNERD_TIMEOUT_MS/)]);
    expect(sent).toHaveLength(3);
  }, 150_000);

  it("--json: every failure is one error object on stdout, stderr keeps no copy; the same exit codes", async () => {
    const usage = await roadnerd(["call", "storage/top_consumers", "--path", "/tmp", "--json"]);
    expect([usage.code, JSON.parse(usage.stdout), usage.stderr]).toEqual([
      2,
      {
        error: {
          code: "E_USAGE",
          message: "--path: not a flag of `roadnerd call`; tool params are key=value words: path=/tmp",
          hint: "roadnerd --help for usage",
        },
      },
      "",
    ]);
    const unknown = await roadnerd(["call", "ports/who_uses_prot", "port=1", "--json"], env);
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stdout)).toEqual({
      error: { code: "E_UNKNOWN_TOOL", message: expect.any(String), hint: expect.stringContaining("closest: ") },
    });
    answer = {
      status: 503,
      body: { error: { code: "E_NO_BINARY", message: "ss: not installed", hint: "install iproute2" } },
    };
    const tool = await roadnerd(["call", "ports/who_uses_port", "port=8080", "--json"], env);
    expect([tool.code, JSON.parse(tool.stdout)]).toEqual([
      1,
      { error: { code: "E_NO_BINARY", message: "ss: not installed", hint: "install iproute2" } },
    ]);
    const [budget, planner] = await Promise.all([
      roadnerd(["triage", "--budget", "abc", "--json"]),
      roadnerd(["triage", "--planner", "openai", "--json"]),
    ]);
    expect([budget.code, JSON.parse(budget.stdout).error]).toEqual([
      2,
      { code: "E_USAGE", message: "--budget: expected 0-10 tool calls, got abc", hint: "roadnerd --help for usage" },
    ]);
    expect([planner.code, JSON.parse(planner.stdout).error.message, planner.stderr]).toEqual([
      2,
      "--planner openai needs ROADNERD_OPENAI_URL and ROADNERD_OPENAI_MODEL",
      expect.not.stringContaining("ROADNERD_OPENAI_URL"),
    ]);
  }, 150_000);

  it("triage: a call that fails is evidence, not a failure (exit 0), in --json and for a person", async () => {
    answer = { status: 504, body: { error: { code: "E_TIMEOUT", message: "ss did not answer" } } };
    const script = join(logDir, "failing-call.json");
    await writeFile(
      script,
      JSON.stringify([
        { tool: "ports/who_uses_port", params: { port: 8080 } },
        { label: "unknown", reason: "no answer" },
      ]),
    );
    const args = ["triage", "--planner", "scripted", "--script", script];
    const json = await roadnerd([...args, "--json"], { ...env, ROADNERD_LOG_DIR: logDir });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      label: "unknown",
      steps: 1,
      evidence: [
        { tool: "ports/who_uses_port", ok: false, error: { code: "E_TIMEOUT", message: "ss did not answer" } },
      ],
    });
    expect(json.stderr).toMatch(/step 1: ports\/who_uses_port → failed E_TIMEOUT in \d+ ms/);
    const text = await roadnerd(args, { ...env, ROADNERD_LOG_DIR: logDir });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^unknown: no answer\n {2}1\. ports\/who_uses_port: E_TIMEOUT: ss did not answer \(\d+ ms/,
    );
  }, 150_000);

  it("flags are checked by each command's schema: a flag another command takes, or a bad pair, exits 2", async () => {
    const flag = await roadnerd(["list", "--planner", "rules"]);
    expect([flag.code, flag.stderr]).toEqual([
      2,
      "--planner: not a flag of `roadnerd list` (roadnerd --help for usage)\n",
    ]);
    const pair = await roadnerd(["call", "network/route_info", "limit"]);
    expect([pair.code, pair.stderr.split(" (")[0]]).toEqual([2, "roadnerd call: expected key=value, got limit"]);
    const command = await roadnerd(["frobnicate"]);
    expect([command.code, command.stderr.split(" (")[0]]).toEqual([2, "unknown command frobnicate"]);
  });
});

describe("servers already running on their default ports", () => {
  /** A dns_config_get result in the tool's shape (the gateway refuses an answer that is not: F3). */
  const standInResult = {
    summary: "from the running one",
    mode: "other",
    servers: [],
    search: [],
    managed_by: "none",
    decided_by: "none",
    file: "/etc/resolv.conf",
    points_to: null,
    read: null,
    resolved_view: null,
    nameservers: [],
    stub: [],
    upstream: [],
    upstream_from: null,
    links: [],
    options: {
      ndots: 1,
      timeout: 5,
      attempts: 2,
      rotate: false,
      edns0: false,
      trust_ad: false,
      single_request: false,
      single_request_reopen: false,
      use_vc: false,
      no_tld_query: false,
      no_aaaa: false,
    },
    options_raw: [],
    warnings: [],
    truncated: false,
    omitted: 0,
  };

  /** A stand-in on dns-config's default port (or `port`), answering /healthz as `name`. */
  async function standInAs(name: string, at?: number): Promise<Server> {
    const port = at ?? readRegistry().find((s) => s.name === "dns-config")?.defaultPort ?? 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        const body =
          req.url === "/healthz" ? { ok: true, name, version: "0.0.0" } : req.url === "/actions" ? [] : standInResult;
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((r) => server.listen(port, "127.0.0.1", () => r()));
    return server;
  }

  it("call uses the one whose /healthz names it, quietly; nothing is spawned", async () => {
    const standIn = await standInAs("roadnerd-dns-config");
    try {
      const r = await roadnerd(["call", "dns-config/dns_config_get", "--json"]);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual(standInResult);
      expect(r.stderr).not.toContain("dns-config");
      expect(r.stderr).not.toContain("stopped the copy");
    } finally {
      await new Promise((r) => standIn.close(r));
    }
  });

  it("one that up moved (ROADNERD_DNS_CONFIG_PORT) is found there with the same variable", async () => {
    const moved = await freePort();
    const standIn = await standInAs("roadnerd-dns-config", moved);
    try {
      const r = await roadnerd(["call", "dns-config/dns_config_get", "--json"], {
        ROADNERD_DNS_CONFIG_PORT: String(moved),
      });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual(standInResult);
      expect(r.stderr).not.toContain("stopped the copy");
    } finally {
      await new Promise((r) => standIn.close(r));
    }
  });

  it("a port answering as something else is left alone, with the reason, and the server's own copy runs", async () => {
    const standIn = await standInAs("not-roadnerd");
    try {
      const r = await roadnerd(["call", "dns-config/dns_config_get", ROOM, "--json"]);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).summary).not.toBe(standInResult.summary);
      expect(r.stderr).toMatch(
        /\(dns-config: 127\.0\.0\.1:\d+ answers as not-roadnerd, not roadnerd-dns-config: starting its own\)/,
      );
    } finally {
      await new Promise((r) => standIn.close(r));
    }
  });
});

describe("roadnerd triage", () => {
  it("--json: the outcome on stdout, each step live on stderr, the JSONL log written", async () => {
    const r = await roadnerd(["triage", "--symptom", "no internet", "--timeout-ms", "15000", "--json"], {
      ROADNERD_LOG_DIR: logDir,
    });
    expect(r.code).toBe(0);
    const outcome = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(outcome).toMatchObject({ label: "wifi", reason: "no interface is up with a carrier", steps: 2 });
    expect(Object.keys(outcome).sort()).toEqual([
      "category_hint",
      "evidence",
      "label",
      "metrics",
      "reason",
      "run_id",
      "steps",
    ]);
    expect(r.stderr).toMatch(/step 1: network\/route_info \(attached in \d+ ms\) → ok in \d+ ms/);
    expect(r.stderr).toMatch(/step 2: network\/iface_info → ok in \d+ ms/);
    // "step N" counts tool calls, as `steps` does; the end is the verdict, not a third step.
    expect(r.stderr).toContain("verdict: wifi: no interface is up with a carrier");
    expect(r.stderr).not.toContain(`step ${Number(outcome.steps) + 1}`);
    expect(await readdir(logDir)).toContain(`triage-${outcome.run_id}.jsonl`);
  });

  it("--run-id reaches every log line; the log goes to $XDG_STATE_HOME/roadnerd/runs, else ~/.local/state", async () => {
    const state = join(logDir, "state");
    const r = await roadnerd(["triage", "--symptom", "no internet", "--run-id", "rn-cli.1", ROOM_FLAG, "--json"], {
      XDG_STATE_HOME: state,
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ run_id: "rn-cli.1", category_hint: expect.stringMatching(/^wifi: /) });
    const lines = (await readFile(join(state, "roadnerd/runs/triage-rn-cli.1.jsonl"), "utf8")).trim().split("\n");
    expect(lines.map((l) => JSON.parse(l).run_id)).toEqual(["rn-cli.1", "rn-cli.1", "rn-cli.1"]);
    expect(JSON.parse(lines.at(-1) ?? "{}")).toMatchObject({ label: "wifi", category_hint: expect.any(String) });
    // No XDG_STATE_HOME: under HOME (a temp dir here, never the real one); the pretty output names the file.
    const home = join(logDir, "home");
    const pretty = await roadnerd(["triage", "--symptom", "disk_full", "--run-id", "rn-cli.2", ROOM_FLAG], {
      HOME: home,
    });
    expect(pretty.code).toBe(0);
    expect(pretty.stdout).toContain(`log: ${join(home, ".local/state/roadnerd/runs/triage-rn-cli.2.jsonl")}`);
    expect(pretty.stdout).toMatch(/^ {2}1\. storage\/disk_usage: /m);
  });

  it("for a person: the verdict once, each call once with what it showed, nothing repeated on stderr", async () => {
    // The symptom as plain words, as a person types it.
    const r = await roadnerd(["triage", "no", "internet", ROOM_FLAG], { ROADNERD_LOG_DIR: logDir });
    expect(r.code).toBe(0);
    const both = r.stdout + r.stderr;
    expect(both.split("no interface is up with a carrier").length - 1).toBe(1);
    expect(both.split("network/route_info").length - 1).toBe(1);
    expect(both.split("network/iface_info").length - 1).toBe(1);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("wifi: no interface is up with a carrier");
    expect(lines[1]).toMatch(/^ {2}1\. network\/route_info: no default route .* \(\d+ ms, attached in \d+ ms\)$/);
    expect(lines[2]).toMatch(/^ {2}2\. network\/iface_info: \d+ interfaces?, 0 up .* \(\d+ ms\)$/);
    expect(lines[3]).toMatch(/^ {2}log: \//);
    expect(lines).toHaveLength(4);
    expect(r.stderr.split("\n")[0]).toBe("triage with rules: no internet");
    const twice = await roadnerd(["triage", "no", "internet", "--symptom", "dns"]);
    expect([twice.code, twice.stderr.split("\n")[0]]).toEqual([
      2,
      "roadnerd triage: the symptom twice (--symptom and words); give one (roadnerd --help for usage)",
    ]);
  });

  it("a symptom the rules do not understand is unknown, with nothing called", async () => {
    const r = await roadnerd(["triage", "--symptom", "my laptop is slow", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ label: "unknown", steps: 0 });
    const bad = await roadnerd(["triage", "--run-id", "a b"]);
    expect([bad.code, bad.stderr.split("\n")[0]]).toEqual([
      2,
      "--run-id: expected 1-64 chars of A-Z a-z 0-9 . _ : -, got a b (roadnerd --help for usage)",
    ]);
  });

  it("a budget or timeout out of range is a usage error", async () => {
    const budget = await roadnerd(["triage", "--budget", "abc"]);
    expect(budget.code).toBe(2);
    expect(budget.stderr).toContain("--budget: expected 0-10 tool calls, got abc");
    const timeout = await roadnerd(["triage", "--timeout-ms", "999999"]);
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toMatch(/^--timeout-ms: expected \d+-\d+, got 999999/);
  });

  it("--planner scripted: replies as strings (verbatim) or objects; a malformed script is one clear line", async () => {
    const script = join(logDir, "replies.json");
    await writeFile(
      script,
      JSON.stringify([{ tool: "network/route_info", params: {} }, '{"label":"routing","reason":"scripted"}']),
    );
    const r = await roadnerd([
      "triage",
      "--planner",
      "scripted",
      "--script",
      script,
      "--timeout-ms",
      "15000",
      "--json",
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ label: "routing", reason: "scripted", steps: 1 });
    await writeFile(script, JSON.stringify([42]));
    const bad = await roadnerd(["triage", "--planner", "scripted", "--script", script]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("expected a JSON list of replies");
    expect(bad.stderr).not.toContain("invalid_type");
    // The example it gives is a script that parses as written.
    const example = /e\.g\. (\[.*\]) \(roadnerd --help/.exec(bad.stderr)?.[1] ?? "";
    expect(JSON.parse(example)).toHaveLength(2);
    const missing = await roadnerd(["triage", "--planner", "scripted", "--script", join(logDir, "nope.json")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^--script \S+nope\.json: no such file \(/);
    await writeFile(script, "[1,");
    const notJson = await roadnerd(["triage", "--planner", "scripted", "--script", script]);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toContain(": not JSON; expected a list of replies, e.g. [{");
  });

  it("--planner openai without an endpoint is a usage error, nothing spawned", async () => {
    const r = await roadnerd(["triage", "--planner", "openai"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("needs ROADNERD_OPENAI_URL and ROADNERD_OPENAI_MODEL");
  });
});

describe("roadnerd up", () => {
  it("starts every loadable server and the gateway in one process, prints the table, and stops on SIGINT", async () => {
    const child = spawn(process.execPath, [BIN, "up", "--port", "0"], { env: ENV, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      for (let i = 0; i < 1200 && !stdout.includes("gateway (MCP)"); i += 1)
        await new Promise((r) => setTimeout(r, 100));
      const rows = stdout
        .trim()
        .split("\n")
        .slice(1)
        .map((l) => l.trim().split(/\s{2,}/));
      const servers = rows.filter((r) => r[0] !== "gateway (MCP)");
      expect(servers.length).toBeGreaterThanOrEqual(2);
      const pids: number[] = [];
      for (const [name, url, pid] of servers) {
        // Each on its registered default port, as `pnpm start` and compose use them.
        expect(url).toBe(`http://127.0.0.1:${readRegistry().find((s) => s.name === name)?.defaultPort}`);
        const health = (await (await fetch(`${url}/healthz`)).json()) as { ok: boolean; name: string };
        expect(health).toMatchObject({ ok: true, name: `roadnerd-${name}` });
        pids.push(Number(pid));
      }
      const gw = rows.find((r) => r[0] === "gateway (MCP)");
      expect(gw?.[1]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      // One process for all: every server's pid is the gateway's, and the gateway's /healthz lists each as up.
      expect(new Set(pids)).toEqual(new Set([child.pid]));
      const gwHealth = (await (await fetch(gw?.[1]?.replace(/\/mcp$/, "/healthz") ?? "")).json()) as {
        servers: Record<string, { state: string }>;
      };
      for (const [name] of servers) expect(gwHealth.servers[String(name)]).toMatchObject({ state: "up" });
      expect(servers.map((r) => r[0])).toContain("network");
      expect(stderr).toContain("Every server in this one process; Ctrl-C stops them all.");
      expect(stderr).toContain(`From a script: kill -INT ${child.pid} (this process`);
      child.kill("SIGINT");
      expect(await exited).toBe(0);
      expect(stderr).toContain("stopped.");
      for (const pid of pids) expect(isLive(pid)).toBe(false);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 180_000);
});

describe("roadnerd up: settings, --processes, nothing started", () => {
  it("--processes starts the named server as its own process on the port --set gives it", async () => {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [BIN, "up", "ports", "--processes", "--port", "0", "--set", `ports.PORT=${port}`],
      {
        env: ENV,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      for (let i = 0; i < 1200 && !stdout.includes("gateway (MCP)"); i += 1)
        await new Promise((r) => setTimeout(r, 100));
      const row = stdout.split("\n").find((l) => l.startsWith("ports"));
      const [, url, pid] = row?.trim().split(/\s{2,}/) ?? [];
      expect(url).toBe(`http://127.0.0.1:${port}`);
      expect(Number(pid)).not.toBe(child.pid);
      expect(isLive(Number(pid))).toBe(true);
      child.kill("SIGINT");
      expect(await exited).toBe(0);
      expect(isLive(Number(pid))).toBe(false);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  }, 180_000);

  it("exits 1 instead of serving an empty gateway when no server could start, with the per-server hint", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const r = await roadnerd(["up", "network", "--port", "0", "--set", `network.PORT=${port}`]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`network did not start: 127.0.0.1:${port} is already in use`);
      expect(r.stderr).toContain("--set network.PORT=<port>");
      expect(r.stderr).toContain("no server could start; not serving an empty gateway");
      expect(r.stdout).not.toContain("gateway (MCP)");
    } finally {
      taken.close();
    }
  }, 180_000);

  it("a second up while one runs: one line that says so, not one per server (exit 1)", async () => {
    // Both in a network namespace of their own, so the default ports are theirs alone.
    const first = join(logDir, "first-up.log");
    const script = [
      "ip link set lo up",
      '"$0" "$1" up --port 0 >"$2" 2>&1 & first=$!',
      'i=0; while [ $i -lt 1200 ] && ! grep -q "gateway (MCP)" "$2"; do sleep 0.1; i=$((i+1)); done',
      '"$0" "$1" up --port 0; rc=$?',
      "kill -INT $first; wait $first; exit $rc",
    ].join("\n");
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        "unshare",
        ["--net", "--", "sh", "-c", script, process.execPath, BIN, first],
        { env: ENV, timeout: 170_000 },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    expect(await readFile(first, "utf8")).toContain("gateway (MCP)");
    expect(r.code, r.stderr).toBe(1);
    const ports = readRegistry().map((s) => s.defaultPort);
    expect(r.stderr).toContain(
      `every server's port is taken (${ports.join(", ")}): is \`roadnerd up\` already running`,
    );
    expect(r.stderr).not.toContain("did not start");
    // Not one line per server (there were 14): the summary, its hint, the exit line. A loaded machine may add a
    // line of its own (seen once in CI-like runs), so the bound is "fewer than one per server", not an exact count.
    const lines = r.stderr.trim().split("\n");
    expect(
      lines.filter((l) => l.includes("every server's port is taken")),
      r.stderr,
    ).toHaveLength(1);
    expect(lines.length, r.stderr).toBeLessThan(ports.length);
  }, 180_000);

  it("refuses a --set naming a variable the server does not take (usage, exit 2)", async () => {
    const r = await roadnerd(["up", "--set", "network.HOST=0.0.0.0"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--set network.HOST: network takes");
  });
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}
