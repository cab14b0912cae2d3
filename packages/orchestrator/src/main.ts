/** roadnerd: the orchestrator's process entry. */
// Only `up` sets V8 flags (up/up.ts): one set here would make every builtin the CLI loads compile from source (ADR 0062).
export {};

const argv = process.argv.slice(2);
// Help and the version without loading the rest (cli/quick.ts).
const { quickAnswer } = await import("./cli/quick.ts");
const quick = quickAnswer(argv);
if (quick) {
  process.stdout.write(quick.text.endsWith("\n") ? quick.text : `${quick.text}\n`);
  process.exitCode = quick.code;
} else {
  const { runCli } = await import("./index.ts");
  process.exitCode = await runCli(argv);
}
