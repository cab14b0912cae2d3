/**
 * Outbound target policy: which addresses a tool may reach. Decided on the IP actually used (after
 * resolution), with IPv4-mapped and NAT64 IPv6 forms unwrapped, so `http://[::ffff:169.254.169.254]`
 * and `http://0x7f000001` are judged as the IPv4 address they are. Cloud metadata and link-local are
 * denied by default; OUTBOUND_ALLOW narrows everything to a list; OUTBOUND_DENY adds to the deny list.
 */
import { lookup } from "node:dns/promises";
import { BlockList } from "node:net";
import { networkInterfaces } from "node:os";
import { ipFamily, isHostname } from "../define/fields.ts";
import { DiagError } from "../errors/errors.ts";
import { METADATA_ENTRIES, UNROUTABLE } from "./metadata.ts";
import { addOwnPort, isOwnPort, isThisMachine } from "./own-ports.ts";

export interface OutboundConfig {
  allow: readonly string[];
  deny: readonly string[];
  /** OUTBOUND_ALLOW_SELF: tools may reach this server's own listening address and port. */
  allowSelf?: boolean;
  /**
   * The server (its name) reaches nothing until OUTBOUND_ALLOW names it: for servers whose targets are someone
   * else's infrastructure or whatever a page links (proxy, webcheck). Unset: the default policy.
   */
  allowlistOnly?: string | undefined;
}

export interface ResolvedTarget {
  /** The host as asked. */
  host: string;
  /** The first checked address: pin the connection to this, or to the next of `addresses`. */
  address: string;
  /** Every address the name resolved to, in the resolver's order, each checked: what a client would try in turn. */
  addresses: string[];
  family: 4 | 6;
  dnsMs: number;
}

export interface OutboundPolicy {
  /**
   * Resolve `host` (or take an IP literal), check every address (on `port`, when known), return them in the
   * resolver's order. E_FORBIDDEN / E_DNS_FAIL.
   */
  resolveTarget(host: string, signal?: AbortSignal, port?: number): Promise<ResolvedTarget>;
  /** Before any lookup: a literal IP checked (with its port, when known), a name checked against the name rules. */
  checkTarget(host: string, port?: number): void;
  /** Throw E_FORBIDDEN if this IP (on this port, when known) may not be reached. */
  checkAddress(ip: string, host?: string, port?: number): void;
  /** The address and port this server listens on: a tool aimed there is refused (a server must not probe itself). */
  setSelf(address: string, port: number): void;
  /**
   * OUTBOUND_ALLOW names this host (exactly or by `*.suffix`): it may be judged by name alone, e.g. a target a
   * proxy resolves, not us.
   */
  allowsName(host: string): boolean;
  /**
   * This policy, and `ip` reachable whatever the rules say: for an address the machine's own configuration names
   * (the resolver in resolv.conf, which may sit on a denied range such as AWS's 169.254.169.253), never for a
   * target a caller chose. The policy it is called on is unchanged.
   */
  trusting(ip: string): OutboundPolicy;
}

/** Denied unless OUTBOUND_ALLOW names them explicitly: cloud metadata, link-local, unroutable. */
export const DEFAULT_DENY: readonly string[] = [...METADATA_ENTRIES.map((e) => e.target), ...UNROUTABLE];

/** The eight 16-bit groups of an IPv6 address (zone id dropped), or null if it is not one. */
function ipv6Groups(ip: string): number[] | null {
  const bare = ip.replace(/%.*$/, "");
  if (ipFamily(bare) !== 6) return null;
  // The URL parser canonicalises (dotted tails become hex groups), so every spelling reads the same.
  const canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  const [head = "", tail] = canonical.split("::");
  const part = (s: string) => (s ? s.split(":").map((g) => Number.parseInt(g, 16)) : []);
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  return [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The IPv4 address an IPv6 address carries, judged as that IPv4: IPv4-mapped (::ffff:0:0/96), SIIT
 * (::ffff:0:0:0/96), IPv4-compatible (::/96) and NAT64 (64:ff9b::/96) in any spelling, zone ids ignored;
 * 6to4 (2002::/16) and Teredo (2001::/32) too, judged as the IPv4 host they lead to.
 */
export function unwrapIPv4(ip: string): string {
  const g = ipv6Groups(ip);
  if (!g) return ip;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const embedded =
    (zeros(0, 5) && g[5] === 0xffff) ||
    (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) ||
    (zeros(0, 6) && !(g[6] === 0 && (g[7] === 0 || g[7] === 1))) ||
    (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6));
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  // 6to4 (2002::/16) reaches the IPv4 in its second and third groups through a relay.
  if (g[0] === 0x2002) return v4(g[1] as number, g[2] as number);
  // Teredo (2001:0::/32) reaches its client, whose IPv4 is the last two groups with every bit flipped.
  if (g[0] === 0x2001 && g[1] === 0) return v4(~(g[6] as number) & 0xffff, ~(g[7] as number) & 0xffff);
  if (!embedded) return ip.replace(/%.*$/, "");
  return v4(g[6] as number, g[7] as number);
}

interface Cidr {
  addr: string;
  prefix: number;
  type: "ipv4" | "ipv6";
}

interface Rules {
  nets: BlockList;
  cidrs: Cidr[];
  names: string[];
  /** `host:port` entries (`127.0.0.1:7101`, `[::1]:7101`, `localhost:7101`): that one port of that host. */
  endpoints: Array<{ host: string; port: number }>;
}

/** `host:port`, `[v6]:port` → its parts; anything else (a CIDR, a name, a bare IPv6) → undefined. */
function endpointOf(entry: string): { host: string; port: number } | undefined {
  const m = /^\[([0-9a-f:.]+)\]:(\d{1,5})$/.exec(entry) ?? /^([^:/[\]]+):(\d{1,5})$/.exec(entry);
  if (!m?.[1] || !m[2]) return undefined;
  const port = Number(m[2]);
  return port >= 1 && port <= 65535 ? { host: m[1].replace(/\.$/, ""), port } : undefined;
}

/**
 * `isIP` for our own DEFAULT_DENY, whose entries are well-formed CIDRs or host names (test/outbound/policy: the
 * same answer as `isIP` for each): `isIP` of an IPv6 address compiles net's IPv6 expression on its first use,
 * 3–4 ms of every start (ADR 0062), and a server with no OUTBOUND_ALLOW or OUTBOUND_DENY checks no other
 * address at start.
 */
export function defaultDenyFamily(addr: string): 0 | 4 | 6 {
  if (addr.includes(":")) return 6;
  return /^\d{1,3}(?:\.\d{1,3}){3}$/.test(addr) ? 4 : 0;
}

/**
 * `deny`: an entry is read as a target is (see below), since one taken for a name denied nothing. `allow` is
 * read as written: a spelling it does not know allows nothing (and cannot reopen metadata by another name).
 * `defaults`: our own DEFAULT_DENY, canonical, its family from its shape.
 */
type RulesOf = "deny" | "allow" | "defaults";

function rules(entries: readonly string[], of: RulesOf): Rules {
  const familyOf = of === "defaults" ? defaultDenyFamily : ipFamily;
  const spell = of === "deny" ? spelledAddress : (a: string) => a;
  const nets = new BlockList();
  const cidrs: Cidr[] = [];
  const names: string[] = [];
  const endpoints: Rules["endpoints"] = [];
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase();
    const endpoint = endpointOf(entry);
    if (endpoint && (ipFamily(endpoint.host) || isHostname(endpoint.host))) {
      // An address however spelled (0x0a090909, 10.9.9.9.): the form a target is judged in.
      endpoints.push({ ...endpoint, host: spell(endpoint.host) });
      continue;
    }
    const [spelled, bits] = entry.split("/");
    // An entry means the address it spells, as a target does (2852039166, 012.011.011.011, 10.9.9.9.): before,
    // such an entry was taken for a host name and matched nothing (attacker review, ADR 0063).
    const addr = spell(spelled ?? "");
    const family = familyOf(addr);
    if (family) {
      const type = family === 4 ? "ipv4" : "ipv6";
      const prefix = bits === undefined ? (family === 4 ? 32 : 128) : Number(bits);
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) {
        throw new DiagError("E_INVALID_INPUT", `bad CIDR in outbound policy: ${raw}`);
      }
      nets.addSubnet(addr, prefix, type);
      cidrs.push({ addr, prefix, type });
      // One IPv6 address that reaches an IPv4 one (::ffff:, NAT64, 6to4, Teredo, ::a.b.c.d) names that too: a
      // target is judged by the IPv4 it reaches.
      const reached = of === "deny" && family === 6 && prefix === 128 ? unwrapIPv4(addr) : addr;
      if (reached !== addr && ipFamily(reached) === 4) {
        nets.addAddress(reached, "ipv4");
        cidrs.push({ addr: reached, prefix: 32, type: "ipv4" });
      }
    } else if (isHostname(entry.replace(/^\*\./, ""))) {
      names.push(entry.replace(/\.$/, ""));
    } else {
      throw new DiagError("E_INVALID_INPUT", `bad entry in outbound policy: ${raw} (expected a CIDR or a host name)`);
    }
  }
  return { nets, cidrs, names, endpoints };
}

/**
 * The allow entries that name a default-denied range specifically (169.254.169.254/32, fe80::/10…): only
 * these reopen it. A catch-all such as 0.0.0.0/0 must not quietly open cloud metadata.
 */
function specificOverrides(allow: Rules, defaults: Rules): BlockList {
  const out = new BlockList();
  for (const a of allow.cidrs) {
    const inside = defaults.cidrs.some((d) => {
      if (d.type !== a.type || a.prefix < d.prefix) return false;
      const one = new BlockList();
      one.addSubnet(d.addr, d.prefix, d.type);
      return one.check(a.addr, a.type);
    });
    if (inside) out.addSubnet(a.addr, a.prefix, a.type);
  }
  return out;
}

/** `list` names this very host:port: by address (`ip`, as a target is judged) or by the name it was asked as. */
function endpointIn(
  list: Rules["endpoints"],
  ip: string | undefined,
  host: string | undefined,
  port: number | undefined,
): boolean {
  if (port === undefined) return false;
  const name = host?.toLowerCase().replace(/\.$/, "");
  return list.some(
    (e) =>
      e.port === port && (e.host === name || (ip !== undefined && ipFamily(e.host) !== 0 && unwrapIPv4(e.host) === ip)),
  );
}

function nameMatches(host: string, names: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return names.some((n) => (n.startsWith("*.") ? h.endsWith(n.slice(1)) : h === n));
}

function ipMatches(ip: string, list: BlockList): boolean {
  const family = ipFamily(ip);
  return family !== 0 && list.check(ip, family === 4 ? "ipv4" : "ipv6");
}

export function createPolicy(config: OutboundConfig, trusted: readonly string[] = []): OutboundPolicy {
  const admitted = new BlockList();
  for (const t of trusted) {
    const ip = unwrapIPv4(t);
    const family = ipFamily(ip);
    if (family) admitted.addAddress(ip, family === 4 ? "ipv4" : "ipv6");
  }
  const allow = rules(config.allow, "allow");
  const deny = rules(config.deny, "deny");
  const defaults = rules(DEFAULT_DENY, "defaults");
  const restricted = config.allow.length > 0;
  const reopened = specificOverrides(allow, defaults);

  let self: { port: number; matches(ip: string): boolean } | undefined;
  let selfAt: [string, number] | undefined;

  function requireAllowlist(target: string): void {
    if (!config.allowlistOnly || restricted) return;
    throw new DiagError(
      "E_FORBIDDEN",
      `${config.allowlistOnly} reaches no target until OUTBOUND_ALLOW names it: ${target}`,
      {
        hint: "start the server with OUTBOUND_ALLOW=<hosts or CIDRs>[,…], e.g. OUTBOUND_ALLOW=proxy.corp.example,192.0.2.10",
      },
    );
  }

  /** A metadata service's name (metadata.google.internal…) is refused unless OUTBOUND_ALLOW names it exactly. */
  function checkMetadataName(host: string): void {
    if (!nameMatches(host, defaults.names)) return;
    const exact = host.toLowerCase().replace(/\.$/, "");
    if (allow.names.includes(exact)) return;
    throw new DiagError("E_FORBIDDEN", `target denied (cloud metadata name): ${exact}`);
  }

  /** OUTBOUND_ALLOW names this very host:port (by address, or by the name it was asked as). */
  const endpointAllowed = (ip: string, host: string | undefined, port: number | undefined) =>
    endpointIn(allow.endpoints, ip, host, port);

  /** OUTBOUND_DENY names this address (as dialled or the IPv4 it reaches), this name, or this host:port. */
  function denied(dialled: string, ip: string, host: string | undefined, port: number | undefined): boolean {
    if (ipMatches(ip, deny.nets) || ipMatches(dialled, deny.nets)) return true;
    if (host !== undefined && nameMatches(host, deny.names)) return true;
    return endpointIn(deny.endpoints, ip, host, port);
  }

  function checkAddress(rawIp: string, host?: string, port?: number): void {
    const dialled = rawIp.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
    const ip = unwrapIPv4(dialled);
    if (ipMatches(ip, admitted)) return;
    const target = host && host !== ip ? `${host} (${ip})` : ip;
    const endpoint = endpointAllowed(ip, host, port);
    if (!endpoint) requireAllowlist(target);
    if (self && port === self.port && self.matches(ip)) {
      throw new DiagError("E_FORBIDDEN", `target is this server itself: ${target} port ${port}`, {
        hint: "point the tool at what you are diagnosing; OUTBOUND_ALLOW_SELF=1 allows it",
      });
    }
    // A sibling's tools would run with the sibling's policy, not ours: only when the operator named it.
    const ownAllowed = config.allowSelf === true && selfAt?.[1] === port;
    if (port !== undefined && !endpoint && !ownAllowed && isOwnPort(port) && isThisMachine(ip)) {
      throw new DiagError("E_FORBIDDEN", `target is a RoadNerd server's port: ${target} port ${port}`, {
        hint: `RoadNerd's own ports are not a target; OUTBOUND_ALLOW=${ipFamily(ip) === 6 ? `[${ip}]` : ip}:${port} allows this one`,
      });
    }
    if (denied(dialled, ip, host, port)) {
      throw new DiagError("E_FORBIDDEN", `target denied by OUTBOUND_DENY: ${target}`);
    }
    if (host !== undefined) checkMetadataName(host);
    const explicitlyAllowed =
      endpoint || ipMatches(ip, allow.nets) || (host !== undefined && nameMatches(host, allow.names));
    if (restricted && !explicitlyAllowed) {
      throw new DiagError("E_FORBIDDEN", `target not in OUTBOUND_ALLOW: ${target}`, {
        hint: "ask the operator to add it to OUTBOUND_ALLOW",
      });
    }
    // Metadata and link-local stay denied unless the operator allowed that very range, not just a wider one.
    if (ipMatches(ip, defaults.nets) && !ipMatches(ip, reopened)) {
      throw new DiagError("E_FORBIDDEN", `target denied (cloud metadata, link-local or unroutable): ${target}`);
    }
  }

  /** Everything decidable before a lookup: the literal IP (with its port), or the name against the name rules. */
  function checkTarget(rawHost: string, port?: number): void {
    const host = numericHost(rawHost.replace(/^\[|\]$/g, ""));
    if (ipFamily(host)) {
      checkAddress(host, undefined, port);
      return;
    }
    if (!isHostname(host)) throw new DiagError("E_INVALID_INPUT", `not a host name: ${host.slice(0, 80)}`);
    // Named with this port in OUTBOUND_ALLOW: by name only here, before any lookup.
    const namedEndpoint = endpointIn(allow.endpoints, undefined, host, port);
    if (!namedEndpoint) requireAllowlist(host);
    // localhost is this machine by definition (RFC 6761), even when a proxy, not we, would resolve it.
    if ((host === "localhost" || host.endsWith(".localhost")) && port !== undefined)
      checkAddress("127.0.0.1", host, port);
    // A name on the deny list (alone, or with this port) is refused before any lookup leaves the machine.
    if (nameMatches(host, deny.names) || endpointIn(deny.endpoints, undefined, host, port))
      throw new DiagError("E_FORBIDDEN", `target denied by OUTBOUND_DENY: ${host}`);
    checkMetadataName(host);
    // An allow list of names only: an unlisted name is refused before its lookup can leave the machine.
    const addressEntries = allow.cidrs.length > 0 || allow.endpoints.some((e) => ipFamily(e.host) !== 0);
    if (restricted && !addressEntries && !namedEndpoint && !nameMatches(host, allow.names)) {
      throw new DiagError("E_FORBIDDEN", `target not in OUTBOUND_ALLOW: ${host}`, {
        hint: "ask the operator to add it to OUTBOUND_ALLOW",
      });
    }
  }

  async function resolveTarget(rawHost: string, signal?: AbortSignal, port?: number): Promise<ResolvedTarget> {
    const host = numericHost(rawHost.replace(/^\[|\]$/g, ""));
    const started = performance.now();
    checkTarget(host, port);
    const literal = ipFamily(host);
    if (literal) return { host, address: host, addresses: [host], family: literal as 4 | 6, dnsMs: 0 };
    let addresses: Array<{ address: string; family: number }>;
    try {
      addresses = await abortable(lookup(host, { all: true, verbatim: true }), signal);
    } catch (err) {
      if (err instanceof DiagError) throw err;
      const code = (err as { code?: string }).code ?? "EFAIL";
      throw new DiagError("E_DNS_FAIL", `${host} did not resolve (${code})`, { cause: err });
    }
    for (const a of addresses) checkAddress(a.address, host, port);
    const first = addresses[0];
    if (!first) throw new DiagError("E_DNS_FAIL", `${host} has no addresses`);
    return {
      host,
      address: first.address,
      addresses: [...new Set(addresses.map((a) => a.address))],
      family: first.family === 6 ? 6 : 4,
      dnsMs: Math.round(performance.now() - started),
    };
  }

  function setSelf(address: string, port: number): void {
    selfAt = [address, port];
    addOwnPort(port);
    if (config.allowSelf) return;
    const bound = unwrapIPv4(address);
    const wildcard = bound === "0.0.0.0" || bound === "::";
    // A wildcard bind answers on every local address; a specific one only on itself (0.0.0.0 as a
    // destination means "this host", and is denied by default anyway).
    // A BlockList, like every other rule: it matches an address however it is spelled.
    const local = new BlockList();
    for (const ip of wildcard ? localAddresses() : [bound]) {
      const family = ipFamily(ip);
      if (family) local.addAddress(ip, family === 4 ? "ipv4" : "ipv6");
    }
    if (wildcard) {
      local.addSubnet("127.0.0.0", 8, "ipv4");
      local.addAddress("::1", "ipv6");
    }
    self = { port, matches: (ip) => ipMatches(unwrapIPv4(ip), local) };
  }

  const allowsName = (host: string) => nameMatches(host, allow.names);
  const trusting = (ip: string) => {
    const wider = createPolicy(config, [...trusted, ip]);
    if (selfAt) wider.setSelf(...selfAt);
    return wider;
  };
  return { resolveTarget, checkAddress, checkTarget, setSelf, allowsName, trusting };
}

/** An address entry as a target is read: inet_aton's IPv4 forms made dotted, one trailing dot dropped. */
function spelledAddress(entry: string): string {
  if (entry.includes(":")) return entry;
  const bare = entry.replace(/\.$/, "");
  const numeric = numericHost(bare);
  return ipFamily(numeric) ? numeric : entry;
}

/**
 * A "name" the resolver would read as an IPv4 address (2852039166, 0xa9fea9fe, 0251.0376.0251.0376,
 * 169.254.43518: inet_aton's forms) is that address, judged before any lookup. The URL parser knows the forms.
 */
function numericHost(host: string): string {
  if (ipFamily(host) || !/^[0-9a-fx.]+$/i.test(host) || !/^[0-9]|^0x/i.test(host)) return host;
  try {
    const parsed = new URL(`http://${host}/`).hostname;
    return ipFamily(parsed) === 4 ? parsed : host;
  } catch {
    return host;
  }
}

/** This machine's interface addresses, IPv4-in-IPv6 forms unwrapped. */
function localAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .map((i) => unwrapIPv4(i.address));
}

function abortable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new DiagError("E_TIMEOUT", "name lookup did not finish before the deadline"));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
