/**
 * The README curl runner: every `curl` line in a README's bash blocks is run as written against a live
 * server, with only the server's address replaced. A line ending in `# → E_CODE` must fail with that code;
 * any other must answer without an error object (an SSE line must end with `end`, without `error`).
 */
import { command, slot } from "../define/command.ts";
import { createExec } from "../exec/exec.ts";

/** The one command this runner may start: a README's curl line, through bash for its quoting, as a user pastes it. */
const curlLine = command("bash", ["-c", slot("line", /^curl [^\n]+$/)]);
const exec = createExec([curlLine], process.env.PATH ?? "/usr/bin:/bin");

export interface CurlExample {
  line: string;
  expectCode: string | undefined;
}

export interface CurlVerdict {
  ok: boolean;
  /** Why not, with what came back. */
  reason: string;
  stdout: string;
}

export function curlExamples(markdown: string): CurlExample[] {
  const blocks = [...markdown.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
  return blocks
    .flatMap((b) => b.split("\n"))
    .filter((l) => l.startsWith("curl "))
    .map((line) => ({ line, expectCode: /#\s*→\s*(E_[A-Z_]+)\s*$/.exec(line)?.[1] }));
}

/** `addresses`: the documented host:port (e.g. localhost:7101) → the live server's host:port. */
export async function runCurlExample(
  example: CurlExample,
  addresses: Readonly<Record<string, string>>,
  timeoutMs = 15_000,
): Promise<CurlVerdict> {
  let line = example.line;
  for (const [documented, live] of Object.entries(addresses)) line = line.replaceAll(documented, live);
  const { stdout, exitCode } = await exec(curlLine, { line }, { timeoutMs });
  const fail = (reason: string): CurlVerdict => ({ ok: false, reason, stdout });
  if (exitCode !== 0) return fail(`curl exited with ${exitCode}`);
  if (example.line.includes("/sse/")) {
    if (!stdout.includes("event: message")) return fail("no message event");
    if (stdout.trim().split("\n").at(-2) !== "event: end") return fail("the last event is not end");
    if (stdout.includes("event: error")) return fail("an error event");
    return { ok: true, reason: "", stdout };
  }
  let body: { error?: unknown; result?: { isError?: boolean } };
  try {
    body = JSON.parse(stdout);
  } catch {
    return fail("not JSON");
  }
  if (example.expectCode) {
    const code = (body.error as { code?: string } | undefined)?.code;
    return code === example.expectCode ? { ok: true, reason: "", stdout } : fail(`expected ${example.expectCode}`);
  }
  // A diagnosis may carry `error: "E_…"` as a string; a failed call has an error object.
  if (typeof body.error === "object") return fail("an error object");
  if (example.line.includes("/mcp") && (!body.result || body.result.isError)) return fail("no MCP result");
  return { ok: true, reason: "", stdout };
}
