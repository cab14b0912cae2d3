/** @roadnerd/orchestrator — work in progress. */
export {};
