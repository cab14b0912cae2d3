// A process that holds sockets for the tests: HOLD is a JSON list of {proto: tcp|tcp6|udp|udp6, host, port}
// (port 0: any; "same": the first socket's port). Once all are bound it logs one JSON line
// {"msg":"listening","url":"hold://…","sockets":[…]} (what testkit's spawnListening waits for), then waits.
// Its own argv (secrets included) is what the tests expect to see, masked.
import { fork } from "node:child_process";
import dgram from "node:dgram";
import net from "node:net";

// A worker forked with SHARE=1 gets the parent's TCP servers over IPC: one socket, two holders (like nginx).
if (process.argv[2] === "worker") {
  let got = 0;
  const kept = [];
  process.on("message", (_m, handle) => {
    kept.push(handle);
    got += 1;
    process.send?.({ got });
  });
  process.on("disconnect", () => process.exit(0));
  setInterval(() => {}, 60_000);
} else {
  await hold();
}

async function hold() {
  const wanted = JSON.parse(process.env.HOLD ?? "[]");
  const bound = [];
  const keep = [];
  for (const w of wanted) {
    const port = w.port === "same" ? (bound[0]?.port ?? 0) : w.port;
    if (w.proto.startsWith("tcp")) {
      const srv = net.createServer((s) => s.destroy());
      await new Promise((resolve, reject) => {
        srv.once("error", reject);
        srv.listen(port, w.host, resolve);
      });
      keep.push(srv);
      bound.push({ proto: w.proto, host: w.host, port: srv.address().port });
    } else {
      const sock = dgram.createSocket({ type: w.proto === "udp6" ? "udp6" : "udp4", reuseAddr: Boolean(w.reuse) });
      await new Promise((resolve, reject) => {
        sock.once("error", reject);
        sock.bind(port, w.host, resolve);
      });
      keep.push(sock);
      bound.push({ proto: w.proto, host: w.host, port: sock.address().port });
    }
  }
  let worker;
  if (process.env.SHARE === "1") {
    worker = fork(new URL(import.meta.url).pathname, ["worker"], { stdio: ["ignore", "ignore", "inherit", "ipc"] });
    const servers = keep.filter((k) => k instanceof net.Server);
    for (const srv of servers) {
      await new Promise((resolve) => {
        worker.once("message", resolve);
        worker.send("server", srv);
      });
    }
  }
  const line = { msg: "listening", url: `hold://${process.pid}`, sockets: bound, worker: worker?.pid ?? null };
  process.stdout.write(`${JSON.stringify(line)}\n`);
  process.on("SIGTERM", () => {
    worker?.kill("SIGKILL");
    process.exit(0);
  });
  setInterval(() => {}, 60_000);
}
