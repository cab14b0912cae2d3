/**
 * Where else this machine sets a proxy, read-only and under a root (PROXY_ROOT, "/" by default):
 * /etc/environment, /etc/environment.d/*.conf, systemd's DefaultEnvironment=, apt's Acquire::*::Proxy and the
 * admin's GNOME defaults in /etc/dconf/db/*.d. A PAC/WPAD address is reported, never fetched or run.
 * The user's own GNOME settings need their session (dconf over D-Bus): said, not guessed.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { MASK } from "@roadnerd/conventions";
import { maskProxyValue } from "./proxy-value.ts";

export interface SystemSetting {
  source: "etc_environment" | "environment_d" | "systemd" | "apt" | "gnome_defaults";
  /** The file as it sits under the root (e.g. /etc/apt/apt.conf.d/95proxy). */
  path: string;
  /** The variable or key: http_proxy, Acquire::http::Proxy, system/proxy/http host… */
  name: string;
  /** Masked. */
  value: string;
}

export interface Unread {
  source: string;
  reason: string;
}

export interface SystemProxies {
  settings: SystemSetting[];
  /** PAC or WPAD addresses (and auto-detect helpers), masked; never fetched. */
  pac: Array<{ path: string; name: string; value: string }>;
  unread: Unread[];
}

const PROXY_VAR = /^(https?|ftp|all|no|socks)_proxy$/i;
const PAC_VAR = /^(auto_proxy|pac_url|proxy_pac|proxy_autoconfig_url)$/i;

async function readText(path: string, signal: AbortSignal): Promise<string | null> {
  try {
    return await readFile(path, { encoding: "utf8", signal });
  } catch {
    return null;
  }
}

async function list(dir: string, suffix = ""): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((f) => f.endsWith(suffix) && !f.startsWith(".")).sort();
  } catch {
    return [];
  }
}

/** `KEY=value`, `export KEY="value"`: environment files as pam_env and systemd read them. */
export function parseEnvAssignments(text: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (m) out.push([m[1] as string, unquote(m[2] as string)]);
  }
  return out;
}

function unquote(v: string): string {
  const t = v.trim();
  return /^(["']).*\1$/.test(t) ? t.slice(1, -1) : t;
}

/** systemd's `DefaultEnvironment="A=1" B=2`: space-separated assignments, each possibly quoted. */
export function parseDefaultEnvironment(text: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const raw of text.split("\n")) {
    const m = /^\s*DefaultEnvironment=(.*)$/.exec(raw);
    if (!m) continue;
    for (const word of (m[1] as string).match(/"[^"]*"|'[^']*'|\S+/g) ?? []) {
      const eq = unquote(word);
      const at = eq.indexOf("=");
      if (at > 0) out.push([eq.slice(0, at), eq.slice(at + 1)]);
    }
  }
  return out;
}

/** apt's `Acquire::http::Proxy "…";` (and per-host and auto-detect forms), flat or one level nested. */
export function parseAptProxies(text: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  // Comments: whole `//` or `#` lines and /* blocks */ (a `//` inside "http://…" is not one).
  const clean = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*(\/\/|#)[^\n]*$/gm, "");
  for (const m of clean.matchAll(
    /Acquire::(https?|ftp)::(Proxy(?:-Auto-Detect)?(?:::[A-Za-z0-9.-]+)?)\s+"([^"]*)"/gi,
  )) {
    out.push([`Acquire::${m[1]}::${m[2]}`, m[3] as string]);
  }
  for (const m of clean.matchAll(/Acquire::(https?|ftp)\s*\{([^}]*)\}/gi)) {
    for (const inner of (m[2] as string).matchAll(/(Proxy(?:-Auto-Detect)?(?:::[A-Za-z0-9.-]+)?)\s+"([^"]*)"/g)) {
      out.push([`Acquire::${m[1]}::${inner[1]}`, inner[2] as string]);
    }
  }
  return out;
}

/** dconf keyfiles: `[system/proxy/http]` then `host='…'`. */
export function parseDconfProxy(text: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let section = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1] as string;
      continue;
    }
    if (!section.startsWith("system/proxy")) continue;
    const kv = /^([A-Za-z-]+)\s*=\s*(.*)$/.exec(line);
    if (kv) out.push([`${section} ${kv[1]}`, unquote(kv[2] as string)]);
  }
  return out;
}

export async function readSystemProxies(root: string, signal: AbortSignal): Promise<SystemProxies> {
  const settings: SystemSetting[] = [];
  const pac: SystemProxies["pac"] = [];
  const at = (p: string) => join(root, p);
  const take = (source: SystemSetting["source"], path: string, pairs: Array<[string, string]>) => {
    for (const [name, value] of pairs) {
      const isPac = PAC_VAR.test(name) || /autoconfig-url|Proxy-Auto-Detect/i.test(name);
      if (isPac && value !== "" && value !== "''") pac.push({ path, name, value: maskProxyValue(value) });
      else if (PROXY_VAR.test(name) || source === "apt" || source === "gnome_defaults") {
        // GNOME keeps the proxy's user and password in keys of their own.
        const secret = /password|passwd|authentication-user/i.test(name) && value !== "" && value !== "''";
        settings.push({ source, path, name, value: secret ? MASK : maskProxyValue(value) });
      }
    }
  };

  const etcEnv = await readText(at("etc/environment"), signal);
  if (etcEnv !== null) take("etc_environment", "/etc/environment", parseEnvAssignments(etcEnv));
  for (const f of await list(at("etc/environment.d"), ".conf")) {
    const text = await readText(at(`etc/environment.d/${f}`), signal);
    if (text !== null) take("environment_d", `/etc/environment.d/${f}`, parseEnvAssignments(text));
  }
  const systemd = [
    "etc/systemd/system.conf",
    ...(await list(at("etc/systemd/system.conf.d"), ".conf")).map((f) => `etc/systemd/system.conf.d/${f}`),
  ];
  for (const p of systemd) {
    const text = await readText(at(p), signal);
    if (text !== null) take("systemd", `/${p}`, parseDefaultEnvironment(text));
  }
  const apt = ["etc/apt/apt.conf", ...(await list(at("etc/apt/apt.conf.d"))).map((f) => `etc/apt/apt.conf.d/${f}`)];
  for (const p of apt) {
    const text = await readText(at(p), signal);
    if (text !== null) take("apt", `/${p}`, parseAptProxies(text));
  }
  for (const db of await list(at("etc/dconf/db"), ".d")) {
    for (const f of await list(at(`etc/dconf/db/${db}`))) {
      const text = await readText(at(`etc/dconf/db/${db}/${f}`), signal);
      if (text !== null) take("gnome_defaults", `/etc/dconf/db/${db}/${f}`, parseDconfProxy(text));
    }
  }
  const unread: Unread[] = [
    {
      source: "gnome_user",
      reason:
        "the user's GNOME proxy (org.gnome.system.proxy) is in their dconf database, read over their session bus: run `gsettings list-recursively org.gnome.system.proxy` in their session",
    },
  ];
  return { settings, pac, unread };
}
