/**
 * @roadnerd/conventions/supervise — long-lived supervised children, for the orchestrator that attaches servers
 * on request: start a process that announces `listening`, watch it, stop its whole group. A server never
 * needs this (its own subprocesses go through ctx.exec), so it is not in the author entry. hostHttp starts a
 * server's HTTP surface inside the calling process (`roadnerd up` hosts every server in one process).
 */

export { HostError, type HostedHttp, type HostHttpOptions, hostHttp } from "./http/host-http.ts";
export { type ProgramOutput, type RunProgramOptions, runProgram } from "./process/run-program.ts";
export {
  DEFAULT_LISTEN_TIMEOUT_MS,
  exitText,
  liveSupervised,
  SUPERVISE_KILL_GRACE_MS,
  type Supervised,
  type SupervisedExit,
  SuperviseError,
  type SuperviseOptions,
  superviseListening,
} from "./process/supervise.ts";
