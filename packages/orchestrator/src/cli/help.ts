/** `roadnerd --help`, `roadnerd help <command>` and `roadnerd <command> --help`: the usage, exit codes and env. */

/** One entry per command: its usage line(s) and what it does, with an example. */
export const COMMAND_HELP = {
  list: `roadnerd list [--json]
  every server's tools, one line each, then its streams' URLs (nothing is started)`,
  call: `roadnerd call <server>/<tool> [key=value …] [--host <name>] [--json]
  one tool; its server starts on first use (or the one \`roadnerd up\` runs is used); --host: another
  machine's server, from ROADNERD_HOSTS (local, the default, is this one). Tool params are
  key=value words, not flags: roadnerd call storage/top_consumers path=/var n=5
  prints the summary and a table of the main fields; --json prints the whole result for machines`,
  triage: `roadnerd triage [symptom words | --symptom "…"] [--planner rules|openai|scripted]
                [--script replies.json] [--budget 3 (0: no tools, label from the symptom)] [--timeout-ms 2000]
                [--run-id <your id: on every log line and tool call>] [--host <name>] [--json]
  find why the network (or a port, disk, service) misbehaves in ≤3 read-only tool calls, e.g.
  roadnerd triage port 8080 already in use: the label and reason, then each call once with what it showed.
  --host: diagnose another machine of ROADNERD_HOSTS through its servers
  --json: the report on stdout, and on stderr "step N" (the N-th tool call) live and "verdict" at the end`,
  mcp: `roadnerd mcp [--http] [--port 7100] [--planner …]
  the MCP gateway (every tool plus triage) over stdio (default; answers what was piped, exits on EOF)
  or Streamable HTTP on 127.0.0.1 (--http; the page at http://127.0.0.1:<port>/ too)`,
  up: `roadnerd up [server…] [--port 7100] [--planner …] [--set <server>.<VAR>=<value> …] [--processes]
  every server (or the named ones) on its default port + the MCP gateway and the page at
  http://127.0.0.1:7100/, all in this one process (--processes: one each); a faulted server restarts;
  exits 1 when no server could start; Ctrl-C stops all (ps shows it as "roadnerd up": SIGTERM there too)`,
  eval: `roadnerd eval [scenario…] [--out docs/eval]
  the triage evaluation on network-namespace scenarios (root)`,
} as const;

export type HelpTopic = keyof typeof COMMAND_HELP;

export const isHelpTopic = (word: string | undefined): word is HelpTopic =>
  word !== undefined && Object.hasOwn(COMMAND_HELP, word);

const EXIT_TEXT = `exit: 0 done · 1 the work failed · 2 usage or invalid input (wherever it was caught) · 130 interrupted
      (triage: a label is done, unknown included; a call that failed is part of its evidence)
--json: the result on stdout as one JSON document; a failure too, as {"error":{"code","message","hint"}}
      (the servers' error body), with the exit code above; progress and notes stay on stderr`;

const ENV_TEXT = `env: ROADNERD_LOG_DIR, ROADNERD_IDLE_MS, ROADNERD_ATTACH_TIMEOUT_MS, ROADNERD_TIMEOUT_MS, ROADNERD_PLANNER,
     ROADNERD_OPENAI_URL, ROADNERD_OPENAI_MODEL, ROADNERD_OPENAI_KEY, ROADNERD_MODEL_PROFILE (3b|13b|20b),
     ROADNERD_EVAL_MODELS (3b=…,13b=…,20b=…), ROADNERD_PROBE_HOST, ROADNERD_GATEWAY_TOKEN,
     ROADNERD_SERVERS_FILE, ROADNERD_SERVER_<NAME>_URL / _TOKEN, ROADNERD_HOSTS (a fleet: hosts.json),
     ROADNERD_<SERVER>_<VAR> (up: one server's setting, e.g. ROADNERD_WEBCHECK_OUTBOUND_ALLOW=127.0.0.1)`;

export const HELP = `roadnerd: attach RoadNerd servers on request, triage, serve one MCP gateway, evaluate.

usage:
${Object.values(COMMAND_HELP)
  .map((h) => `  ${h.replaceAll("\n", "\n  ")}`)
  .join("\n")}
  roadnerd help [command] · roadnerd <command> --help · roadnerd --version

${EXIT_TEXT}

logs: one JSONL per triage in $ROADNERD_LOG_DIR, else $XDG_STATE_HOME/roadnerd/runs
      (else ~/.local/state/roadnerd/runs); the newest 1,000 runs are kept

${ENV_TEXT}
`;

export function commandHelp(topic: HelpTopic): string {
  return `usage: ${COMMAND_HELP[topic]}\n\n${EXIT_TEXT}\n`;
}
