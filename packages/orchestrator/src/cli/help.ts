export const HELP = `roadnerd: attach RoadNerd servers on request, triage, serve one MCP gateway, evaluate.

usage:
  roadnerd list [--json]                          every server's tools (nothing is started)
  roadnerd call <server>/<tool> [key=value …] [--json]
  roadnerd triage [--planner rules|openai|scripted] [--symptom "…"] [--script replies.json]
                  [--budget 3 (0: no tools, label from the symptom)] [--timeout-ms 2000]
                  [--run-id <your id: on every log line and tool call>] [--json]
  roadnerd mcp [--http] [--port 7100] [--planner …]
                                                  MCP gateway over stdio (default) or Streamable HTTP
  roadnerd up [server…] [--port 7100] [--planner …] [--set <server>.<VAR>=<value> …] [--processes]
                                                  every server (or the named ones) on its default port + the
                                                  MCP gateway, all in this one process (--processes: one
                                                  each); a faulted server restarts; Ctrl-C stops all
  roadnerd eval [scenario…] [--out docs/eval]     the triage evaluation on network-namespace scenarios (root)

exit: 0 done · 1 the work failed · 2 usage or invalid input · 130 interrupted

logs: one JSONL per triage in $ROADNERD_LOG_DIR, else $XDG_STATE_HOME/roadnerd/runs
      (else ~/.local/state/roadnerd/runs)

env: ROADNERD_LOG_DIR, ROADNERD_IDLE_MS, ROADNERD_ATTACH_TIMEOUT_MS, ROADNERD_PLANNER,
     ROADNERD_OPENAI_URL, ROADNERD_OPENAI_MODEL, ROADNERD_OPENAI_KEY, ROADNERD_MODEL_PROFILE (3b|13b|20b),
     ROADNERD_EVAL_MODELS (3b=…,13b=…,20b=…),
     ROADNERD_PROBE_HOST, ROADNERD_SERVERS_FILE, ROADNERD_SERVER_<NAME>_URL / _TOKEN,
     ROADNERD_<SERVER>_<VAR> (up: one server's setting, e.g. ROADNERD_WEBCHECK_OUTBOUND_ALLOW=127.0.0.1)
`;
