/** roadnerd: the orchestrator's process entry. */
import { holdYoungGeneration } from "@roadnerd/conventions/memory";

// Before the CLI's modules load, so the young generation never grows (the kernel's process/memory.ts).
holdYoungGeneration();
const { runCli } = await import("./index.ts");
process.exitCode = await runCli(process.argv.slice(2));
