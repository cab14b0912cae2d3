/** roadnerd: the orchestrator's process entry. */
import { holdYoungGeneration } from "./memory.ts";

// Before the CLI's modules load, so the young generation never grows (memory.ts).
holdYoungGeneration();
const { runCli } = await import("./index.ts");
process.exitCode = await runCli(process.argv.slice(2));
