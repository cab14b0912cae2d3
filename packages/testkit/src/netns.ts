/**
 * Network namespaces for tests: unique names per run, veth pairs, addresses, routes, links up or down,
 * commands run inside. Everything a lab creates is removed by `cleanup()` (and, as a last resort, when
 * the test process exits or is told to), so a failing test leaves nothing behind. Needs root.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { type SpawnedServer, type SpawnOptions, spawnServer } from "./spawn-server.ts";

/** One end of a veth pair. `ns: null` is the root namespace (only for the end a test talks through). */
export interface VethEnd {
  ns: string | null;
  name: string;
  mac?: string;
  /** CIDRs, IPv4 or IPv6; IPv6 ones skip duplicate address detection so they are usable at once. */
  addrs?: string[];
  /** Default true. */
  up?: boolean;
  /** "auto" (default): link-local from the MAC; "none": no automatic address; "off": IPv6 disabled (namespaces only). */
  ipv6?: "auto" | "none" | "off";
}

/** Why namespace tests cannot run here, or undefined when they can (or must: under CI=true they never skip). */
export function netnsSkipReason(): string | undefined {
  if (process.env.CI === "true") return undefined;
  if (process.getuid?.() !== 0) return "needs root to create network namespaces (runs under CI=true)";
  // scripts/sealed.mjs without real root: mapped root in a user namespace cannot mount /run/netns.
  if (process.env.ROADNERD_NO_NETNS) return `network namespaces unavailable: ${process.env.ROADNERD_NO_NETNS}`;
  const ip = spawnSync("ip", ["-V"], { stdio: "ignore" });
  if (ip.error || ip.status !== 0) return "needs iproute2 (`ip`) to create network namespaces";
  return undefined;
}

/** How lab.serve runs a server: spawn options, and HTTPS from these files (testkit's createTestCa makes them). */
export interface LabServeOptions extends Omit<SpawnOptions, "wrap"> {
  tls?: {
    certFile: string;
    keyFile: string /** Mutual TLS: clients need a certificate this CA signed. */;
    clientCaFile?: string;
  };
}

let labCount = 0;
const liveLabs = new Set<NetnsLab>();
let hooksInstalled = false;

/**
 * Last-resort cleanup when a test never reaches its afterAll: on exit, and on the SIGTERM/SIGINT a
 * test runner sends a worker it is ending (vitest sends SIGTERM, then SIGKILL 500 ms later).
 */
function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  const cleanAll = () => {
    for (const lab of liveLabs) lab.cleanupSync();
  };
  process.once("exit", cleanAll);
  for (const [signal, code] of [
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const) {
    process.once(signal, () => {
      cleanAll();
      process.exit(code);
    });
  }
}

export class NetnsLab {
  readonly #id: number;
  readonly #namespaces: string[] = [];
  readonly #etcDirs: string[] = [];
  readonly #servers: SpawnedServer[] = [];
  #count = 0;
  #links = 0;

  constructor() {
    labCount += 1;
    this.#id = labCount;
    liveLabs.add(this);
    installHooks();
  }

  /** A fresh namespace named rn-<pid>-<lab>-<n> (unique per run) with loopback up. */
  addNs(): string {
    this.#count += 1;
    const name = `rn-${process.pid}-${this.#id}-${this.#count}`;
    run("ip", ["netns", "add", name]);
    this.#namespaces.push(name);
    this.ip(name, "link", "set", "lo", "up");
    return name;
  }

  /** A name for a root-namespace interface that no other run uses (the test's own end of a veth). */
  rootIfName(tag: string): string {
    const name = `rn${process.pid}-${this.#id}${tag}`;
    if (name.length > 15) throw new Error(`interface name too long (max 15): ${name}`);
    return name;
  }

  /** `ip [-n ns] args…`; returns stdout. */
  ip(ns: string | null, ...args: string[]): string {
    return run("ip", ns ? ["-n", ns, ...args] : args);
  }

  /** Run argv inside a namespace (`ip netns exec`); returns stdout. */
  exec(ns: string, argv: string[]): string {
    return run("ip", ["netns", "exec", ns, ...argv]);
  }

  /** Prefix for spawning a long-running process inside a namespace, e.g. spawnServer's `wrap`. */
  wrap(ns: string): string[] {
    return ["ip", "netns", "exec", ns];
  }

  /**
   * Start a built server inside `ns`; cleanup() stops it before its namespace goes. It binds a namespace
   * address (not loopback), so it runs with an AUTH_TOKEN (server.token) as a real deployment must, and with
   * `tls` over HTTPS; without, in plain HTTP on purpose (ALLOW_PLAINTEXT=1: the link is the test's own veth).
   */
  async serve(ns: string, name: string, options: LabServeOptions = {}): Promise<SpawnedServer> {
    const { tls, ...spawn } = options;
    const transport: Record<string, string> = tls
      ? {
          TLS_CERT_FILE: tls.certFile,
          TLS_KEY_FILE: tls.keyFile,
          ...(tls.clientCaFile ? { TLS_CLIENT_CA_FILE: tls.clientCaFile } : {}),
        }
      : { ALLOW_PLAINTEXT: "1" };
    const env = { AUTH_TOKEN: `lab-${randomBytes(12).toString("hex")}`, ...transport, ...options.env };
    const server = await spawnServer(name, { ...spawn, env, wrap: this.wrap(ns) });
    this.#servers.push(server);
    return server;
  }

  /** A veth pair between two namespaces, each end configured as asked. Removed with its namespace. */
  veth(a: VethEnd, b: VethEnd): void {
    // A root end is an interface up with a carrier in the namespace every other test file reads.
    if ((a.ns === null || b.ns === null) && process.env.ROADNERD_WORLD === "bare") {
      throw new Error(
        "a veth end in the test's own namespace: name the file *.links.test.ts so `pnpm test` runs it apart " +
          "from the files that read that namespace (docs/decisions/0029-test-worlds.md)",
      );
    }
    const where = (e: VethEnd) => (e.ns ? ["netns", e.ns] : []);
    // Created directly inside the target namespaces, so names only need to be unique there.
    run("ip", ["link", "add", a.name, ...where(a), "type", "veth", "peer", "name", b.name, ...where(b)]);
    for (const end of [a, b]) this.#configure(end);
  }

  #configure(end: VethEnd): void {
    if (end.mac) this.ip(end.ns, "link", "set", end.name, "address", end.mac);
    // Before the link goes up, so the kernel never adds a link-local address it should not.
    if (end.ipv6 === "none") this.ip(end.ns, "link", "set", "dev", end.name, "addrgenmode", "none");
    if (end.ipv6 === "off") this.sysctl(end.ns, `net.ipv6.conf.${end.name}.disable_ipv6`, "1");
    for (const cidr of end.addrs ?? []) {
      const extra = cidr.includes(":") ? ["nodad"] : [];
      this.ip(end.ns, "addr", "add", cidr, "dev", end.name, ...extra);
    }
    if (end.up ?? true) this.ip(end.ns, "link", "set", end.name, "up");
  }

  /** A sysctl inside one of our namespaces (never the root namespace's). */
  sysctl(ns: string | null, key: string, value: string): void {
    if (!ns) throw new Error(`refusing to change ${key} in the root namespace`);
    this.exec(ns, ["sysctl", "-q", "-w", `${key}=${value}`]);
  }

  /**
   * A veth from `ns` to the root namespace on a free 10.213.x.y/30, so a test in the root namespace can
   * talk to a server bound inside. IPv6 is off on the namespace end and silent on the root end.
   */
  linkToRoot(ns: string, dev = "mgmt0"): { nsAddr: string; rootAddr: string } {
    const { rootAddr, nsAddr } = this.freeLink30();
    this.#links += 1;
    this.veth(
      { ns, name: dev, addrs: [`${nsAddr}/30`], ipv6: "off" },
      { ns: null, name: this.rootIfName(`m${this.#links}`), addrs: [`${rootAddr}/30`], ipv6: "none" },
    );
    return { nsAddr, rootAddr };
  }

  /**
   * A neighbour entry to a MAC nobody owns: packets to `ip` leave on `dev` and are never answered,
   * which is what a firewall that drops looks like from the client (no nft/iptables needed).
   */
  silentNeighbour(ns: string, dev: string, ip: string): void {
    this.ip(ns, "neigh", "replace", ip, "lladdr", "02:00:5e:00:53:ff", "dev", dev, "nud", "permanent");
  }

  /** Files in /etc/netns/<ns>/ replace /etc/<file> for processes started with `ip netns exec`. */
  etcFile(ns: string, file: "resolv.conf" | "nsswitch.conf" | "hosts", text: string): void {
    const dir = `/etc/netns/${ns}`;
    // mkdir reports the first directory it had to create: remove /etc/netns too if we made it.
    const created = mkdirSync(dir, { recursive: true });
    if (created === "/etc/netns") this.#etcDirs.push(created);
    if (!this.#etcDirs.includes(dir)) this.#etcDirs.unshift(dir);
    writeFileSync(`${dir}/${file}`, text);
  }

  /** Packets sent so far on an interface (to prove that a refused call sent none). */
  txPackets(ns: string, dev: string): number {
    const [link] = JSON.parse(this.ip(ns, "-j", "-s", "link", "show", "dev", dev)) as Array<{
      stats64?: { tx?: { packets?: number } };
    }>;
    return link?.stats64?.tx?.packets ?? 0;
  }

  /** A /30 in 10.213.0.0/16 that no root-namespace route overlaps: [network, root end, namespace end]. */
  freeLink30(): { net: string; rootAddr: string; nsAddr: string } {
    const routes = JSON.parse(run("ip", ["-j", "-4", "route", "show", "table", "all"])) as Array<{ dst?: string }>;
    const taken = routes.map((r) => r.dst ?? "").filter((d) => /^\d+\.\d+\.\d+\.\d+(\/\d+)?$/.test(d));
    for (let attempt = 0; attempt < 64; attempt += 1) {
      const base = ipv4ToInt("10.213.0.0") + Math.floor(Math.random() * 16384) * 4;
      if (taken.some((cidr) => overlaps(cidr, base, 30))) continue;
      return { net: intToIpv4(base), rootAddr: intToIpv4(base + 1), nsAddr: intToIpv4(base + 2) };
    }
    throw new Error("no free /30 in 10.213.0.0/16");
  }

  /** Stop what still runs inside our namespaces (all started by this test), delete them and their files. */
  cleanupSync(): void {
    for (const ns of this.#namespaces.splice(0)) {
      const pids = spawnSync("ip", ["netns", "pids", ns], { encoding: "utf8" }).stdout ?? "";
      for (const pid of pids.split(/\s+/).filter(Boolean)) {
        try {
          process.kill(Number(pid), "SIGKILL");
        } catch {
          // Already gone.
        }
      }
      // Deleting the namespace deletes the veths in it, and with them their peers elsewhere.
      spawnSync("ip", ["netns", "del", ns], { stdio: "ignore" });
    }
    for (const dir of this.#etcDirs.splice(0)) {
      if (dir === "/etc/netns") rmdirQuiet(dir);
      else rmSync(dir, { recursive: true, force: true });
    }
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.#servers.splice(0).map((s) => s.stop()));
    this.cleanupSync();
    liveLabs.delete(this);
  }
}

function run(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 10_000 });
  } catch (err) {
    const e = err as { stderr?: string; message?: string };
    throw new Error(`${cmd} ${args.join(" ")} failed: ${(e.stderr || e.message || "").trim()}`);
  }
}

/** Remove a directory only if it is empty (another run may have put its namespace files there). */
function rmdirQuiet(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Not empty, or already gone.
  }
}

function ipv4ToInt(ip: string): number {
  return ip.split(".").reduce((n, part) => n * 256 + Number(part), 0);
}

function intToIpv4(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join(".");
}

/** Does `cidr` share any address with base/bits? (Two prefixes overlap when one contains the other.) */
function overlaps(cidr: string, base: number, bits: number): boolean {
  const [addr = "", len = "32"] = cidr.split("/");
  const shorter = Math.min(Number(len), bits);
  const block = 2 ** (32 - shorter);
  return Math.floor(ipv4ToInt(addr) / block) === Math.floor(base / block);
}

export function createNetnsLab(): NetnsLab {
  return new NetnsLab();
}
