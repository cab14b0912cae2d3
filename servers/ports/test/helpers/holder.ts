/**
 * Processes that hold ports for the tests, started through testkit with a known argv (secrets included):
 * `node hold-ports.mjs --password=hunter2 token=abc https://u:p@host.example/`.
 */
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MASK } from "@roadnerd/conventions";
import { type ListeningProcess, spawnListening } from "@roadnerd/testkit";

export const HOLDER_SCRIPT = fileURLToPath(new URL("./hold-ports.mjs", import.meta.url));
export const SECRET_ARGS = ["--password=hunter2", "token=abc", "https://u:p@host.example/"];
/** The holder's command line as every tool must show it. */
export const HOLDER_CMD = `${process.execPath} ${HOLDER_SCRIPT} --password=${MASK} token=${MASK} https://${MASK}@host.example/`;
export const NODE_EXE = realpathSync(process.execPath);
export const SECRETS = ["hunter2", "token=abc", "u:p@"];

export interface HoldSpec {
  proto: "tcp" | "tcp6" | "udp" | "udp6";
  host: string;
  port: number | "same";
  reuse?: boolean;
}

export interface Holder extends ListeningProcess {
  sockets: Array<{ proto: string; host: string; port: number }>;
  /** With share: the forked worker that holds the same TCP sockets. */
  worker: number | null;
}

/** Start a holder (optionally wrapped, e.g. in `ip netns exec`) and wait until its sockets are bound. */
export async function startHolder(
  hold: HoldSpec[],
  options: { wrap?: string[]; argv0?: string; share?: boolean } = {},
): Promise<Holder> {
  const cmd = [...(options.wrap ?? []), options.argv0 ?? process.execPath, HOLDER_SCRIPT, ...SECRET_ARGS];
  const env = { HOLD: JSON.stringify(hold), SHARE: options.share ? "1" : "0" };
  const p = await spawnListening(cmd, { env });
  const line = p.lines
    .map((l) => JSON.parse(l) as { msg?: string; sockets?: Holder["sockets"]; worker?: number | null })
    .find((l) => l.msg === "listening");
  return { ...p, sockets: line?.sockets ?? [], worker: line?.worker ?? null };
}

/** The holder's secrets found in a result (none, when masking works). */
export function leakedSecrets(value: unknown): string[] {
  const text = JSON.stringify(value);
  return SECRETS.filter((s) => text.includes(s));
}
