/** /proc/<pid>/stat and cmdline as process_info and who_uses_port read them: odd names, long and secret argv. */
import { readFileSync } from "node:fs";
import { MASK } from "@roadnerd/conventions";
import { READABLE_SAMPLES, SECRET_SAMPLES } from "@roadnerd/conventions/testing";
import { describe, expect, it } from "vitest";
import { createUserNames, parsePasswd } from "../../src/proc/passwd.ts";
import { bootTime, CMD_MAX_CHARS, parseStat, processFacts, shownCmd, shownName } from "../../src/proc/process-facts.ts";

describe("parseStat", () => {
  it("splits after the last parenthesis, so a name with spaces and parentheses survives", () => {
    const stat = "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000 50 0";
    expect(parseStat(stat)).toEqual({ name: "my (odd) name", state: "S", ppid: 1, startTicks: 123456 });
    expect(parseStat("garbage")).toBeNull();
  });

  it("reads this process's own stat: its parent and a start time after boot", () => {
    const own = parseStat(readFileSync("/proc/self/stat", "utf8"));
    expect(own?.ppid).toBe(process.ppid);
    expect(own?.startTicks).toBeGreaterThan(0);
    expect(bootTime()).toBe(Number(/^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))?.[1]));
  });
});

describe("shownCmd", () => {
  it("masks argv, then cuts it to CMD_MAX_CHARS", () => {
    expect(shownCmd("java\0-jar\0app.jar\0--db.password=s3cret\0", "java")).toBe(
      `java -jar app.jar --db.password=${MASK}`,
    );
    const long = shownCmd(`node\0${"a".repeat(1000)}\0--token\0abc\0`, "node");
    expect(long).toHaveLength(CMD_MAX_CHARS);
    expect(long.endsWith("…")).toBe(true);
    // The secret sat beyond the cut: masking came first, so nothing of it is left either way.
    expect(shownCmd(`node\0--token\0abc${"x".repeat(400)}\0`, "node")).toBe(`node --token ${MASK}`);
  });

  it("drops the NULs a process that set its title pads its argv area with", () => {
    // Node's process.title = "roadnerd up": the title, then NULs to the end of the original argv.
    expect(shownCmd(`roadnerd up${"\0".repeat(12)}`, "roadnerd up")).toBe("roadnerd up");
  });

  // Every command line of the shared corpus as /proc/<pid>/cmdline holds it (NUL-separated argv).
  it("keeps no secret of the corpus's command lines, and changes none of its readable lines", () => {
    const commands = SECRET_SAMPLES.filter((s) => s.command === true);
    const cmdline = (argv: readonly string[]) => `${argv.join("\0")}\0`;
    const leaks = commands
      .map((s) => ({ s, shown: shownCmd(cmdline(s.argv ?? s.text.split(" ")), "x") }))
      .filter(({ s, shown }) => shown.includes(s.secret))
      .map(({ s, shown }) => `${s.form}: ${shown}`);
    expect(commands.length).toBeGreaterThan(100);
    expect(leaks).toEqual([]);
    const changed = READABLE_SAMPLES.filter((t) => shownCmd(cmdline(t.split(" ")), "x") !== t);
    expect(changed).toEqual([]);
  });

  it("masks a rewritten process title (one string with spaces) and shows a kernel thread as [name]", () => {
    expect(shownCmd("postgres: app app 192.0.2.7(5432) password=hunter2 idle", "postgres")).toBe(
      `postgres: app app 192.0.2.7(5432) password=${MASK} idle`,
    );
    expect(shownCmd("", "kworker/0:1")).toBe("[kworker/0:1]");
  });
});

describe("processFacts", () => {
  it("describes this test process from /proc, and nothing for a pid that is not running", () => {
    const me = processFacts(process.pid, createUserNames());
    expect(me).toMatchObject({ pid: process.pid, ppid: process.ppid, user: "root", uid: 0, exe: expect.any(String) });
    expect(processFacts(4_194_304, createUserNames())).toBeNull();
  });
});

describe("passwd", () => {
  it("maps uids to names, first entry wins, and falls back to the uid", () => {
    const names = parsePasswd(
      "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534::/:/usr/sbin/nologin\ndup:x:0:0::/:/bin/sh\n#bad\n",
    );
    expect([...names]).toEqual([
      [0, "root"],
      [65534, "nobody"],
    ]);
    expect(createUserNames()(0)).toBe("root");
    expect(createUserNames("/nonexistent/passwd")(0)).toBe("0");
  });
});

describe("shownName", () => {
  it("keeps comm, but names a renamed main thread (Node ≥ 24's MainThread) after the program", () => {
    expect(shownName("nginx", "nginx: worker process\0")).toBe("nginx");
    expect(shownName("MainThread", "/usr/local/bin/node\0server.js\0")).toBe("node");
    expect(shownName("node-MainThread", "/usr/local/bin/node\0server.js\0")).toBe("node");
    expect(shownName("MainThread", "/opt/app/rn-ports-probe\0x.mjs\0")).toBe("rn-ports-probe");
    expect(shownName("MainThread", "")).toBe("MainThread");
  });
});
