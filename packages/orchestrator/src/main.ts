/** roadnerd: the orchestrator's process entry. */
import { holdYoungGeneration } from "@roadnerd/conventions/memory";

// Before the CLI's modules load, so the young generation never grows (the kernel's process/memory.ts).
holdYoungGeneration();
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
