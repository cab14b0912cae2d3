/**
 * Another local user flooding a server's connection cap (issue 18): a child process run as uid 65534 under
 * `ulimit -n 1024` (setpriv, as the review did) opens `sockets` connections to 127.0.0.1:`port` and reopens each
 * the moment it is closed, until `forMs` has passed (a bounded loop). What each sends, by `mode`: "idle" nothing;
 * "half" a request line and one header, never the blank line that ends them; "requests" a keep-alive
 * `GET /healthz`, the next one on each answer (the variants stop 26's attacker used, B1).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";

export interface UidFlood {
  /** Ends the child (if its own deadline has not already). */
  stop(): Promise<void>;
}

export type FloodMode = "idle" | "half" | "requests";

const SENDS: Record<FloodMode, string> = {
  idle: "",
  half: "GET /healthz HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n",
  requests: "GET /healthz HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n",
};

export async function uidFlood(
  port: number,
  sockets: number,
  forMs: number,
  mode: FloodMode = "idle",
): Promise<UidFlood> {
  const again = mode === "requests" ? 's.on("data",()=>{if(Date.now()<until)s.write(send)});' : "";
  const script = `const net=require("node:net");const until=Date.now()+${forMs};let up=0,told=false;const send="${SENDS[mode]}";
function open(){if(Date.now()>until)return;const s=net.connect(${port},"127.0.0.1");s.on("error",()=>{});${again}
s.once("connect",()=>{if(send)s.write(send);up++;if(!told&&up>=${sockets}){told=true;process.stdout.write("ready\\n")}});
s.once("close",()=>setImmediate(open))}
for(let i=0;i<${sockets};i++)open();
setTimeout(()=>process.exit(0),${forMs}+200);
setTimeout(()=>{if(!told){told=true;process.stdout.write("ready\\n")}},5000);`;
  const child: ChildProcess = spawn(
    "sh",
    [
      "-c",
      'ulimit -n 1024 && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$0" -e "$1"',
      process.execPath,
      script,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (d: Buffer) => {
      if (String(d).includes("ready")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`flood exited early (${code})`)));
  });
  return {
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      if (child.pid !== undefined) child.kill("SIGKILL");
      await exited;
    },
  };
}
