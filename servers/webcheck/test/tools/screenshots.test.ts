/** screenshots lists the saved snapshot files, newest first, against the directory's limits; others' files ignored. */
import { mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callTool } from "@roadnerd/conventions/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { saveArtifact } from "../../src/artifacts/store.ts";
import { server } from "../../src/server.ts";
import { screenshots } from "../../src/tools/screenshots.ts";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "webcheck-list-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe("screenshots", () => {
  it("an artifacts dir that does not exist yet is an empty list", async () => {
    const missing = join(dir, "none");
    const r = await callTool(server, screenshots, {}, { env: { WEBCHECK_ARTIFACTS_DIR: missing } });
    expect(r).toMatchObject({ dir: missing, files: [], count: 0, total_bytes: 0, max_files: 50, max_bytes: 52428800 });
    expect(r.summary).toBe(`no screenshots in ${missing}`);
  });

  it("lists our files newest first with size and time, capped by limit", async () => {
    const limits = { dir, maxFiles: 10, maxBytes: 1 << 20 };
    const saved = [];
    for (let i = 0; i < 3; i += 1) {
      const s = await saveArtifact(limits, Buffer.alloc(100 * (i + 1), 1));
      const t = new Date(Date.UTC(2026, 0, 1, 0, 0, i));
      await utimes(s.path, t, t);
      saved.push(s);
    }
    await writeFile(join(dir, "other.png"), "not ours");
    const env = { WEBCHECK_ARTIFACTS_DIR: dir, WEBCHECK_MAX_ARTIFACTS: "7" };
    const r = await callTool(server, screenshots, { limit: 2 }, { env });
    expect(r).toMatchObject({
      count: 3,
      total_bytes: 600,
      max_files: 7,
      truncated: true,
      omitted: 1,
      files: [
        { path: saved[2]?.path, bytes: 300, taken_at: "2026-01-01T00:00:02.000Z" },
        { path: saved[1]?.path, bytes: 200, taken_at: "2026-01-01T00:00:01.000Z" },
      ],
    });
  });

  it("refuses unknown input keys", async () => {
    await expect(callTool(server, screenshots, { dir: "/etc" })).rejects.toMatchObject({ code: "E_INVALID_INPUT" });
  });
});
