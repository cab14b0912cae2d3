// Root's /healthz while another local uid floods a server's connection cap (issue 18, A1; ADR 0045): each build
// given is started in turn (127.0.0.1:0), uid 65534 opens SOCKETS connections and reopens each the moment it is
// closed, in one MODE — idle (never sends), half (a request line and one header, never the blank line) or
// requests (keep-alive GET /healthz, the next on each answer) — and root makes 20 fresh-connection /healthz
// requests (5 s each). Prints each answer's ms (or its error) and the server's CPU share. Run sealed:
//   unshare -n sh -c 'ip link set lo up; node scripts/bench/uid-flood-ab.mjs half 800 A/servers/network/dist/main.js B/…'
// Stop 26 found half and requests floods reset root; ADR 0058 has the figures before and after (docs/security.md).
import { spawn } from "node:child_process";
import { cpuMicros, startBuilt } from "./built-server.mjs";

const [mode = "half", socketsArg = "800", ...mains] = process.argv.slice(2);
const SEND = {
  idle: "",
  half: "GET /healthz HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n",
  requests: "GET /healthz HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n",
};
if (!(mode in SEND) || mains.length === 0) {
  console.error("usage: uid-flood-ab.mjs idle|half|requests <sockets> <main.js>…");
  process.exit(2);
}

function flood(port, forMs) {
  const again = mode === "requests" ? 's.on("data",()=>{if(Date.now()<until)s.write(send)});' : "";
  const script = `const net=require("node:net");const until=Date.now()+${forMs};const send="${SEND[mode]}";
function open(){if(Date.now()>until)return;const s=net.connect(${port},"127.0.0.1");s.on("error",()=>{});
s.once("connect",()=>{if(send)s.write(send)});${again}s.once("close",()=>setImmediate(open))}
for(let i=0;i<${Number(socketsArg)};i++)open();setTimeout(()=>process.exit(0),${forMs}+200);`;
  return spawn(
    "sh",
    [
      "-c",
      'ulimit -n 8192 && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$0" -e "$1"',
      process.execPath,
      script,
    ],
    { stdio: "ignore" },
  );
}

for (const main of mains) {
  const { child, url } = await startBuilt(main);
  const attacker = flood(new URL(url).port, 25_000);
  await new Promise((r) => setTimeout(r, 3000));
  const cpu0 = cpuMicros(child.pid);
  const t0 = performance.now();
  const seen = [];
  for (let i = 0; i < 20; i++) {
    const started = performance.now();
    try {
      const res = await fetch(`${url}/healthz`, {
        signal: AbortSignal.timeout(5000),
        headers: { connection: "close" },
      });
      await res.text();
      seen.push(`${Math.round(performance.now() - started)}${res.status === 200 ? "" : `:${res.status}`}`);
    } catch (e) {
      seen.push(`ERR:${e.cause?.code ?? e.name}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const share = (cpuMicros(child.pid) - cpu0) / 1000 / (performance.now() - t0);
  const served = seen.filter((s) => !s.startsWith("ERR")).length;
  console.log(`${main}  ${mode} ${socketsArg}: served ${served}/20, cpu ${share.toFixed(2)}  ${seen.join(" ")}`);
  attacker.kill("SIGKILL");
  child.kill();
  await new Promise((r) => child.once("exit", r));
}
