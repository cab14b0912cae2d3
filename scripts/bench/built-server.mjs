// The A/B scripts' shared pieces (healthz-ab, healthz-cpu, mcp-ab, mcp-cpu): start a built server bundle on
// 127.0.0.1:0 and read its CPU time from /proc.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

/**
 * `node <main>` with a clean env (PATH, HOST, PORT=0, LOG_LEVEL=warn, then `env`, then SENV's JSON) and Node
 * flags from NODEARGS; resolves with the child and the URL of its "listening" line, rejects after 30 s.
 */
export function startBuilt(main, env = {}) {
  const nodeArgs = process.env.NODEARGS ? process.env.NODEARGS.split(" ") : [];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, main], {
      env: {
        PATH: process.env.PATH,
        HOST: "127.0.0.1",
        PORT: "0",
        LOG_LEVEL: "warn",
        ...env,
        ...(process.env.SENV ? JSON.parse(process.env.SENV) : {}),
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const timer = setTimeout(() => reject(new Error(`${main} did not start`)), 30_000);
    child.stdout.on("data", (d) => {
      const m = /"url":"([^"]+)"/.exec(d.toString());
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] });
      }
    });
  });
}

/** A process's user + system CPU time so far, in µs (CLK_TCK 100). */
export function cpuMicros(pid) {
  const s = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10_000;
}

/** autocannon's request for one tool call over each surface: POST /actions/<tool>, and tools/call on /mcp. */
export function toolCallRequests(url, tool, args) {
  return {
    actions: {
      url: `${url}/actions/${tool}`,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(args),
    },
    mcp: {
      url: `${url}/mcp`,
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: args } }),
    },
  };
}
