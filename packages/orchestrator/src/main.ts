/** roadnerd: the orchestrator's process entry. */
import { runCli } from "./index.ts";

process.exitCode = await runCli(process.argv.slice(2));
