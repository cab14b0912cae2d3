/**
 * @roadnerd/orchestrator — the `roadnerd` command. Its entry is what runs it; nothing else in the repository
 * imports this package (its tests read its modules directly), so nothing else is exported: widening this list
 * is a decision, pinned by test/entry-exports.test.ts.
 */
export { runCli } from "./cli/main.ts";
