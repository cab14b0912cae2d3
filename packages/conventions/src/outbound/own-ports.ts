/**
 * RoadNerd's own ports, never a target of another RoadNerd server unless OUTBOUND_ALLOW names that host:port:
 * otherwise a proxy or webcheck allowed only 127.0.0.1 could be pointed at network's `/sse/http_check?url=…`
 * (which has no allowlist) and fetch whatever network may reach. Three sources: the block the registry hands
 * default ports out of (7100 the gateway, 7101… the servers; test/registry.test.ts pins that every server's
 * port is inside it), every port this process itself listens on (`roadnerd up` runs all the servers in
 * one process, each on its own port), and every port a `ROADNERD_<NAME>_PORT` variable names. Servers on
 * other ports are refused by the hop marker instead (hop.ts, ADR 0047).
 */
import { BlockList } from "node:net";
import { networkInterfaces } from "node:os";
import { ipFamily } from "../define/fields.ts";

/** The gateway's default port and the servers' default ports after it (registry: one above the highest). */
export const ROADNERD_PORT_BLOCK = { first: 7100, last: 7199 } as const;

const boundHere = new Set<number>();

/** A server of this process listens on `port` (main.ts after listen, the gateway likewise). */
export function addOwnPort(port: number): void {
  boundHere.add(port);
}

/** `ROADNERD_<NAME>_PORT`: how `roadnerd up` is told a server's port; its children inherit every one. */
const PORT_VARIABLE = /^ROADNERD_[A-Z0-9_]+_PORT$/;

/** The ports `env`'s ROADNERD_<NAME>_PORT variables name. */
function namedPorts(env: NodeJS.ProcessEnv): Set<number> {
  const ports = new Set<number>();
  for (const [name, value] of Object.entries(env)) {
    const port = PORT_VARIABLE.test(name) ? Number(value?.trim()) : Number.NaN;
    if (Number.isInteger(port) && port > 0) ports.add(port);
  }
  return ports;
}

/**
 * process.env's named ports, read again when a policy is made (refreshNamedPorts) and at most once a second
 * otherwise: listing process.env goes through libuv's environment for every variable (~40 µs with a shell's
 * few dozen), which per dial was 13–18% of a server's CPU for an outbound tool (`head` at 16 connections).
 */
const NAMED_PORTS_TTL_MS = 1_000;
let processNamed: { ports: Set<number>; readAt: number } | undefined;

/** Read process.env's ROADNERD_<NAME>_PORT variables now (a policy being made: a variable set since counts). */
export function refreshNamedPorts(): void {
  processNamed = { ports: namedPorts(process.env), readAt: performance.now() };
}

/** A port the environment names for a RoadNerd server (ROADNERD_NETWORK_PORT=7201…): a sibling moved off the block is still ours. */
function isNamedPort(port: number, env: NodeJS.ProcessEnv): boolean {
  if (env !== process.env) return namedPorts(env).has(port);
  if (!processNamed || performance.now() - processNamed.readAt > NAMED_PORTS_TTL_MS) refreshNamedPorts();
  return processNamed?.ports.has(port) ?? false;
}

export function isOwnPort(port: number, env: NodeJS.ProcessEnv = process.env): boolean {
  return (
    (port >= ROADNERD_PORT_BLOCK.first && port <= ROADNERD_PORT_BLOCK.last) ||
    boundHere.has(port) ||
    isNamedPort(port, env)
  );
}

let local: BlockList | undefined;

/**
 * An address that reaches this machine: loopback, the unspecified address (which connects to this host), or
 * one of its interfaces (a server bound to 0.0.0.0 answers there too). Interfaces are read once.
 */
export function isThisMachine(ip: string): boolean {
  if (!local) {
    local = new BlockList();
    local.addSubnet("127.0.0.0", 8, "ipv4");
    local.addAddress("0.0.0.0", "ipv4");
    local.addAddress("::1", "ipv6");
    local.addAddress("::", "ipv6");
    for (const i of Object.values(networkInterfaces()).flatMap((l) => l ?? [])) {
      const family = ipFamily(i.address.replace(/%.*$/, ""));
      if (family) local.addAddress(i.address.replace(/%.*$/, ""), family === 4 ? "ipv4" : "ipv6");
    }
  }
  const family = ipFamily(ip);
  return family !== 0 && local.check(ip, family === 4 ? "ipv4" : "ipv6");
}
