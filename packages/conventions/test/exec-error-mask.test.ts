/**
 * Regression (red-team review of ADR 0040, finding 5): a program's stderr came back unmasked inside an
 * E_EXEC_FAILED message (`journalctl exited with 1: … -pHUNTER2SECRET … token=TOK…`), though error messages are
 * said to be masked. A real subprocess writes secrets on stderr and exits non-zero; the error a server builds from
 * what it said, and the body a caller gets, carry none of them.
 */
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { command } from "../src/define/command.ts";
import { DiagError, errorBody } from "../src/errors/errors.ts";
import { createExec } from "../src/exec/exec.ts";

const SECRETS = ["HUNTER2SECRET", "Tok9ExecErr", "Pw9ExecUrl"];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rn-exec-mask-"));
  const script = join(dir, "leaky");
  await writeFile(
    script,
    "#!/bin/sh\necho 'backup[12]: running mysqldump -uroot -pHUNTER2SECRET app token=Tok9ExecErr' >&2\n" +
      "echo 'fetch https://bob:Pw9ExecUrl@db.example/ failed' >&2\nexit 1\n",
  );
  await chmod(script, 0o755);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("a program's stderr inside an error message", () => {
  it("is masked in E_EXEC_FAILED and E_UNSUPPORTED, the rest of it kept", async () => {
    const leaky = command("leaky", []);
    const r = await createExec([leaky], `${dir}:/usr/bin:/bin`)(leaky, undefined, { timeoutMs: 10_000 });
    expect(r.exitCode).toBe(1);
    for (const s of SECRETS) expect(r.stderr).toContain(s);
    for (const code of ["E_EXEC_FAILED", "E_UNSUPPORTED"] as const) {
      const err = new DiagError(code, `leaky exited with ${r.exitCode}: ${r.stderr.trim()}`);
      const body = JSON.stringify(errorBody(err));
      for (const s of SECRETS) expect(body).not.toContain(s);
      expect(err.message).toContain("leaky exited with 1: backup[12]: running mysqldump -uroot -p[masked] app");
    }
  });

  it("messages of other codes are left as they were written", () => {
    expect(new DiagError("E_INVALID_INPUT", "name: token=abc is not a unit").message).toBe(
      "name: token=abc is not a unit",
    );
  });
});
