/**
 * Bad input on every surface of the built server: a typed error with its status, and nothing touched (the
 * tree's entries and times are the same after every refused call).
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SpawnedServer, spawnServer } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let base: string;
let server: SpawnedServer;

function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .sort()
    .map((p) => {
      const st = statSync(join(dir, p));
      return `${p} ${st.size} ${st.mtimeMs} ${st.mode}`;
    });
}

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), "rn-storage-bad-"));
  mkdirSync(join(base, "a/b"), { recursive: true });
  writeFileSync(join(base, "a/b/f"), "x");
  server = await spawnServer("storage", { env: { STORAGE_ROOTS: base } });
});

afterAll(async () => {
  await server?.stop();
  rmSync(base, { recursive: true, force: true });
});

const post = async (tool: string, body: string) => {
  const res = await fetch(`${server.url}/actions/${tool}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  return { status: res.status, code: ((await res.json()) as { error?: { code: string } }).error?.code };
};

describe("bad input", () => {
  it("is refused with a typed error on /actions, and changes nothing", async () => {
    const before = snapshot(base);
    const cases: Array<[string, string, number, string]> = [
      ["disk_usage", '{"include_pseudo":1}', 400, "E_INVALID_INPUT"],
      ["disk_usage", '{"limit":-1}', 400, "E_INVALID_INPUT"],
      ["disk_usage", "not json", 400, "E_INVALID_INPUT"],
      ["top_consumers", "{}", 400, "E_INVALID_INPUT"],
      ["top_consumers", '{"path":"a/b"}', 400, "E_INVALID_INPUT"],
      ["top_consumers", `{"path":"${base}/a","depth":"2"}`, 400, "E_INVALID_INPUT"],
      ["top_consumers", `{"path":"${base}/a","n":1000}`, 400, "E_INVALID_INPUT"],
      ["top_consumers", `{"path":"${base}/a\\u0000"}`, 400, "E_INVALID_INPUT"],
      ["top_consumers", `{"path":"${base}/missing"}`, 400, "E_INVALID_INPUT"],
      ["top_consumers", `{"path":"${base}/a/b/f"}`, 400, "E_INVALID_INPUT"],
      ["top_consumers", `{"path":"${base}/../../etc"}`, 403, "E_FORBIDDEN"],
      ["top_consumers", '{"path":"/proc/self/cwd"}', 403, "E_FORBIDDEN"],
      ["top_consumers", `{"path":"${base}/a","timeout_ms":1}`, 400, "E_INVALID_INPUT"],
    ];
    for (const [tool, body, status, code] of cases) {
      expect(await post(tool, body), `${tool} ${body}`).toEqual({ status, code });
    }
    expect(snapshot(base)).toEqual(before);
  });

  it("is refused on /sse before any event", async () => {
    for (const q of ["top_consumers?depth=2", "top_consumers?path=x&n=0", "top_consumers?path=/var&depth=9"]) {
      const res = await fetch(`${server.url}/sse/${q}`);
      expect(res.status, q).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("E_INVALID_INPUT");
    }
  });
});
