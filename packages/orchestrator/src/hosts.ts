/**
 * A fleet behind one gateway: ROADNERD_HOSTS names a JSON file of the other machines, each with the URLs of
 * its servers, the token they run with and the CA that signed their certificates (a client certificate and
 * key too where they ask for one). Read and checked once at start: a bad file is one line and exit 2, a
 * CA file that cannot be read is said then, not at the first call. The machine the gateway runs on is
 * `local` (its servers attach on request); every other host's servers are used as they are.
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { ClientTls } from "@roadnerd/client";
import { maskText } from "@roadnerd/conventions";
import { keyMatchesCertificate, PemFileError, readPemFile } from "@roadnerd/conventions/internal";
import { z } from "zod";
import { UsageError } from "./errors.ts";

/** The gateway's own machine: the default `host` of every tool. */
export const LOCAL_HOST = "local";

/** A server reached at a URL rather than spawned: its token and, for https://, whom to trust. */
export interface RemoteServer {
  url: string;
  token?: string;
  tls?: ClientTls;
}

/** Host name → its servers (server name → how to reach it). */
export type Fleet = ReadonlyMap<string, ReadonlyMap<string, RemoteServer>>;

const hostName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "a host name is lower-case letters, digits and -, up to 63")
  .refine((n) => n !== LOCAL_HOST, `"${LOCAL_HOST}" is the gateway's own machine`);

const serverUrl = z
  .url({ protocol: /^https?$/, error: "expected an http:// or https:// URL" })
  .refine((u) => !/[?#]/.test(u), "expected a base URL, without query or fragment");

/** The shortest token a server accepts as AUTH_TOKEN: a shorter one is a placeholder, never a working token. */
export const MIN_TOKEN_LENGTH = 16;

/**
 * A token as a server's AUTH_TOKEN takes it: 16+ printable ASCII characters, no spaces. A CR or LF in it would
 * break the Authorization header at the first call (undici refuses it), so it is said at start instead.
 */
export const PRINTABLE_TOKEN = /^[\x21-\x7e]+$/;

const bearerToken = z
  .string()
  .min(MIN_TOKEN_LENGTH, `at least ${MIN_TOKEN_LENGTH} characters, as its servers' AUTH_TOKEN (openssl rand -hex 16)`)
  .regex(PRINTABLE_TOKEN, "printable ASCII without spaces, CR or LF, as its servers' AUTH_TOKEN");

const hostEntry = z.strictObject({
  servers: z
    .record(z.string(), serverUrl)
    .refine((s) => Object.keys(s).length > 0, "name at least one server")
    .describe('server name → base URL, e.g. {"network":"https://10.0.0.2:7101"}'),
  token: bearerToken.optional().describe("the AUTH_TOKEN its servers run with"),
  ca: z.string().min(1).optional().describe("PEM file of the CA that signed its servers' certificates"),
  cert: z.string().min(1).optional().describe("PEM client certificate, for servers with TLS_CLIENT_CA_FILE"),
  key: z.string().min(1).optional().describe("PEM key of `cert`"),
});

export const hostsFileSchema = z.record(hostName, hostEntry);
export type HostsFile = z.output<typeof hostsFileSchema>;

/** One line for the first thing that does not fit, with where it is. */
function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid";
  // A bad host name: zod says "Invalid key in record" and keeps the name's own issue inside.
  const inner = issue.code === "invalid_key" ? issue.issues[0]?.message : undefined;
  return `${issue.path.join(".") || "(top)"}: ${inner ?? issue.message}`;
}

/** A URL whose host is this machine (127.0.0.0/8, [::1], localhost): plain HTTP there never crosses a network. */
function isLoopbackUrl(url: string): boolean {
  const name = new URL(url).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return name === "localhost" || name === "::1" || /^127\.\d+\.\d+\.\d+$/.test(name);
}

/** The scheme as the URL parser reads it (`HTTP://` is http too), so only https counts as encrypted. */
function isHttpsUrl(url: string): boolean {
  return new URL(url).protocol === "https:";
}

export interface FleetOptions {
  /** ALLOW_PLAINTEXT=1: a token may go to a host over http:// (a network private by construction). */
  allowPlaintext?: boolean;
}

/**
 * A token bound for `url` would cross the network in clear: the URL is plain http (the scheme as the parser
 * reads it, any case) to a host beyond loopback. The one check for every place a token meets a URL (the hosts
 * file, ROADNERD_SERVERS_FILE, ROADNERD_SERVER_<NAME>_URL/_TOKEN): refused unless ALLOW_PLAINTEXT=1 says the
 * network is private, as a server refuses to bind beyond loopback without TLS.
 */
export function tokenInClear(url: string, token: string | undefined): boolean {
  if (!token || !URL.canParse(url)) return false;
  return !isHttpsUrl(url) && !isLoopbackUrl(url);
}

/** The refusal's sentence: whose token, where to, and both ways out. */
export function plaintextMessage(where: string, url: string, whose: string): string {
  return `${where}: ${maskText(url)} is plain http://, so ${whose} token would cross the network in clear; use https:// (with its ca), or set ALLOW_PLAINTEXT=1 where the network is private`;
}

function plaintextRefusal(host: string, entry: HostsFile[string], where: string): UsageError | undefined {
  const clear = Object.entries(entry.servers).find(([, url]) => tokenInClear(url, entry.token));
  if (!clear) return undefined;
  const [server, url] = clear;
  return new UsageError(plaintextMessage(`ROADNERD_HOSTS ${where}: ${host}.servers.${server}`, url, `${host}'s`));
}

/** The fleet from the parsed file: paths resolved beside it, files checked, server names from the registry. */
export function fleetFrom(file: HostsFile, where: string, known: readonly string[], options: FleetOptions = {}): Fleet {
  const fleet = new Map<string, ReadonlyMap<string, RemoteServer>>();
  for (const [host, entry] of Object.entries(file)) {
    const clear = options.allowPlaintext ? undefined : plaintextRefusal(host, entry, where);
    if (clear) throw clear;
    if ((entry.cert === undefined) !== (entry.key === undefined))
      throw new UsageError(`ROADNERD_HOSTS ${where}: ${host}: a client certificate needs both cert and key`);
    const tls: ClientTls = {};
    for (const [field, name, kind, path] of [
      ["caFile", "ca", "ca", entry.ca],
      ["certFile", "cert", "certificate", entry.cert],
      ["keyFile", "key", "key", entry.key],
    ] as const) {
      if (path === undefined) continue;
      const full = resolve(dirname(where), path);
      // The contents too, as the servers check their TLS files: a garbage `ca` said here, naming the host
      // and the field, not as every call to that host failing with a misleading handshake error.
      try {
        readPemFile(full, kind);
      } catch (err) {
        const why = err instanceof PemFileError ? err.message : "cannot be read";
        throw new UsageError(`ROADNERD_HOSTS ${where}: ${host}.${name} ${full}: ${why}`);
      }
      tls[field] = full;
    }
    // A client certificate and a key of another one: every handshake with that host would fail.
    const [cert, key] = [tls.certFile, tls.keyFile];
    if (cert && key && !keyMatchesCertificate(readFileSync(cert), readFileSync(key)))
      throw new UsageError(`ROADNERD_HOSTS ${where}: ${host}.key ${key}: not the private key of ${host}.cert ${cert}`);
    const servers = new Map<string, RemoteServer>();
    for (const [server, url] of Object.entries(entry.servers)) {
      if (!known.includes(server))
        throw new UsageError(
          `ROADNERD_HOSTS ${where}: ${host}.servers.${server}: not a server (known: ${known.join(", ")})`,
        );
      servers.set(server, {
        url,
        ...(entry.token ? { token: entry.token } : {}),
        ...(url.startsWith("https:") && Object.keys(tls).length ? { tls } : {}),
      });
    }
    fleet.set(host, servers);
  }
  return fleet;
}

/** ROADNERD_HOSTS: the file read, validated and resolved, or a UsageError naming what is wrong. */
export function readHostsFile(path: string, known: readonly string[], options: FleetOptions = {}): Fleet {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    throw new UsageError(`ROADNERD_HOSTS ${path}: not a readable JSON file`);
  }
  const parsed = hostsFileSchema.safeParse(raw);
  // One host's mistake stops them all (a fleet half-read is worse than none): the line says so.
  if (!parsed.success)
    throw new UsageError(`ROADNERD_HOSTS ${path}: ${firstIssue(parsed.error)}; the whole file was refused`);
  return fleetFrom(parsed.data, path, known, options);
}
