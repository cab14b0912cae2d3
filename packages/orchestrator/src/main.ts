/** roadnerd: the orchestrator's process entry. */
// Only `up` sets V8 flags (up/up.ts): one set here would make every builtin the CLI loads compile from source (ADR 0062).
export {};

// A reader that went away (`roadnerd list | head`) ends the output, not the process with a stack: as a shell tool
// does (stop 32's new user saw an unhandled EPIPE).
process.stdout.on("error", (err: NodeJS.ErrnoException) => {
  if (err.code !== "EPIPE") throw err;
  process.exit(process.exitCode ?? 0);
});

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
