/**
 * Regression (stop 26's sealed review): process command lines read back through process_info, as JSON and as
 * `?view=model`, leaked 3 forms of 70 (`rar a -hpPW`, `net use \\srv\share /user:bob PW`, a script after
 * `lftp -e`) and over-masked one (`openssl … -pass env:VAR`). Real processes hold each argv (the script one word
 * with spaces, as /proc shows it); every surface shows the secrets masked and the rest as it was.
 */
import { testApp } from "@roadnerd/conventions/testing";
import { type ListeningProcess, spawnListening } from "@roadnerd/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { server } from "../../src/server.ts";
import { HOLDER_SCRIPT } from "../helpers/holder.ts";

interface Form {
  argv: string[];
  /** What must not come back. */
  secret?: string;
  /** What must come back as it was. */
  shown: string;
}

const FORMS: Form[] = [
  { argv: ["rar", "a", "-hpRarHd9Pw", "b.rar", "docs"], secret: "RarHd9Pw", shown: "rar a -hp[masked] b.rar docs" },
  {
    argv: ["net", "use", "\\\\srv\\share", "/user:bob", "NetUse9Pw"],
    secret: "NetUse9Pw",
    shown: "net use \\\\srv\\share /user:bob [masked]",
  },
  {
    argv: ["lftp", "-e", "open -u bob,LftpE9Pw ftp.example"],
    secret: "LftpE9Pw",
    shown: "lftp -e open -u bob,[masked] ftp.example",
  },
  { argv: ["tool", "Basic", "Ym9iOkJhc2ljOVB3"], secret: "Ym9iOkJhc2ljOVB3", shown: "tool Basic [masked]" },
  {
    argv: ["openssl", "s_client", "-connect", "h:443", "-pass", "env:NOTSECRET"],
    shown: "openssl s_client -connect h:443 -pass env:NOTSECRET",
  },
];

let app: Awaited<ReturnType<typeof testApp>>;
let holders: ListeningProcess[] = [];

beforeAll(async () => {
  app = await testApp(server);
  // Each form as the arguments of a process that holds nothing: node's argv, then the form's words.
  holders = await Promise.all(
    FORMS.map((f) => spawnListening([process.execPath, HOLDER_SCRIPT, ...f.argv], { env: { HOLD: "[]" } })),
  );
});

afterAll(async () => {
  await Promise.all(holders.map((h) => h.stop()));
  await app?.close();
});

const call = (pid: number, view: string) =>
  app.inject({
    method: "POST",
    url: `/actions/process_info${view}`,
    headers: { "content-type": "application/json" },
    payload: JSON.stringify({ pid }),
  });

describe("process_info shows the review's forms masked, on both views", () => {
  it.each(FORMS.map((f, k) => [f.shown, k] as const))("%s", async (_shown, k) => {
    const form = FORMS[k] as Form;
    const pid = holders[k]?.pid ?? 0;
    const json = await call(pid, "");
    const model = await call(pid, "?view=model");
    expect([json.statusCode, model.statusCode]).toEqual([200, 200]);
    expect(json.json().processes[0].cmd).toBe(`${process.execPath} ${HOLDER_SCRIPT} ${form.shown}`);
    // The model view names the process without its command line: nothing of the secret either way.
    expect(model.body).toContain(`pid ${pid}`);
    if (form.secret) {
      expect(json.body).not.toContain(form.secret);
      expect(model.body).not.toContain(form.secret);
    }
  });
});
