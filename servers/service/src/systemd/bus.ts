/**
 * systemd asked over its private bus (the kernel's askSystemd) instead of through systemctl: the same properties,
 * the same manager call, without a process (issue 17: `systemctl show` is ~12 ms of fork, exec and linking).
 * Answers come back in the shapes the commands' parsers give (ShowBlock, ListedUnit), so each tool has one
 * path from there on. `undefined` means "run the command": SYSTEMD_BUS=off, or the socket is missing or
 * refuses us (not root; a server in another PID namespace, whose pid systemd cannot see). A refusal is
 * remembered, first for BUS_RETRY_FIRST_MS, then twice as long at each refusal in a row up to BUS_RETRY_MS:
 * systemd logs each one, and a server that cannot use the bus would knock at every call; a close in the
 * middle of a daemon-reexec (every systemd upgrade) looks the same and must not cost a minute of the bus: once
 * systemd has answered this process, no close is taken for a refusal. A missing socket or one nobody listens
 * on (that reexec's other half) is not remembered at all.
 */
import {
  askSystemd,
  type BusReply,
  BusUnavailable,
  DiagError,
  getProperty,
  MANAGER_PATH,
  type MethodCall,
  privateSocketOf,
  UNIT_INTERFACE,
  unitObjectPath,
} from "@roadnerd/conventions";
import { defineResource } from "../kit.ts";
import type { ListedUnit } from "../parse/list-units.ts";
import type { ShowBlock } from "../parse/systemctl-show.ts";

/** How long a refused bus is left alone after a first refusal, and at most after refusals in a row. */
export const BUS_RETRY_FIRST_MS = 5_000;
export const BUS_RETRY_MS = 60_000;
/**
 * Failed units whose timestamps are asked at most: all of them on any real machine (a brute-force run against
 * sshd leaves thousands of failed instances: 4,100 cost ~0.3 s). Past it, the units after the first this many
 * (in systemd's order) have no `since` and sort last.
 */
export const FAILED_ASKED_AT_MOST = 20_000;

export interface SystemdBus {
  /** Every reply in order, or undefined: ask the command instead. */
  ask(calls: readonly MethodCall[], timeoutMs: number): Promise<BusReply[] | undefined>;
}

export const systemdBus = defineResource({
  name: "systemd bus",
  create: ({ config }): SystemdBus => {
    const setting = config.SYSTEMD_BUS;
    const socket =
      setting === "off" ? undefined : setting === "auto" ? privateSocketOf(config.SYSTEMD_BOOTED_DIR) : setting;
    let refusedUntil = 0;
    let wait = 0;
    let answered = false;
    return {
      async ask(calls, timeoutMs) {
        if (!socket || performance.now() < refusedUntil) return undefined;
        try {
          const replies = await askSystemd(socket, calls, timeoutMs);
          wait = 0;
          answered = true;
          return replies;
        } catch (err) {
          if (!(err instanceof BusUnavailable)) throw err;
          // Once systemd has answered this process, a close or reset before the OK is its daemon-reexec (the same
          // uid and PID namespace are not refused later): not remembered. Refusals met at once count once.
          const now = performance.now();
          if (err.refused && !answered && now >= refusedUntil) {
            wait = Math.min(BUS_RETRY_MS, wait === 0 ? BUS_RETRY_FIRST_MS : wait * 2);
            refusedUntil = now + wait;
          }
          return undefined;
        }
      },
    };
  },
});

/** The interface that carries a unit type's Result (targets, devices and slices have none). */
const RESULT_INTERFACE: Record<string, string> = {
  service: "Service",
  socket: "Socket",
  mount: "Mount",
  swap: "Swap",
  timer: "Timer",
  path: "Path",
  automount: "Automount",
  scope: "Scope",
};

/** A D-Bus error for a property a unit (or a systemd version) does not have: systemctl show prints nothing then. */
const NO_SUCH_PROPERTY = /UnknownProperty|UnknownInterface|InvalidArgs/;

/** A D-Bus error systemd answered that leaves no answer: as the command's failure would be. */
const busFailure = (reply: { error: string; message: string }) =>
  new DiagError("E_EXEC_FAILED", `systemd's bus: ${reply.error}: ${reply.message}`.slice(0, 300));

/** A timestamp (µs since the epoch, 0 for never) as `systemctl show --timestamp=unix` prints it. */
const unixStamp = (usec: unknown) => (typeof usec === "number" && usec > 0 ? `@${Math.floor(usec / 1e6)}` : "");

function propertyValue(property: string, reply: BusReply | undefined): string | undefined {
  if (!reply) return undefined;
  if (!reply.ok) {
    if (NO_SUCH_PROPERTY.test(reply.error)) return undefined;
    throw busFailure(reply);
  }
  const v = reply.body[0];
  if (property.endsWith("Timestamp")) return unixStamp(v);
  // What `systemctl show` prints for a string with a line break in it (bus-print-properties.c), so both paths
  // give one answer: a transient unit's Description may hold one.
  const text = typeof v === "string" ? v : String(v ?? "");
  return text.includes("\n") ? "[unprintable]" : text;
}

/** `systemctl show --property=…` of one unit, as the bus says it: undefined when the bus is not ours to use. */
export async function showUnit(
  bus: SystemdBus,
  name: string,
  properties: readonly string[],
  remaining: () => number,
): Promise<ShowBlock | undefined> {
  const path = unitObjectPath(name);
  const typed = RESULT_INTERFACE[name.slice(name.lastIndexOf(".") + 1)];
  const asked = properties.filter((p) => p !== "Result" || typed);
  const calls = asked.map((p) =>
    getProperty(path, p === "Result" ? `org.freedesktop.systemd1.${typed}` : UNIT_INTERFACE, p),
  );
  const replies = await bus.ask(calls, remaining());
  if (!replies) return undefined;
  const block: ShowBlock = {};
  asked.forEach((p, i) => {
    const v = propertyValue(p, replies[i]);
    if (v !== undefined) block[p] = v;
  });
  return block;
}

/**
 * The failed units (`systemctl list-units --state=failed`) and each one's InactiveEnterTimestamp and its
 * monotonic twin (`systemctl show --state=failed`), in two round trips; undefined when the bus is not ours.
 */
export async function failedUnits(
  bus: SystemdBus,
  remaining: () => number,
): Promise<{ list: ListedUnit[]; shown: Map<string, ShowBlock> } | undefined> {
  const listed = await bus.ask(
    [
      {
        path: MANAGER_PATH,
        interface: "org.freedesktop.systemd1.Manager",
        member: "ListUnitsFiltered",
        args: [{ as: ["failed"] }],
      },
    ],
    remaining(),
  );
  if (!listed?.[0]) return undefined;
  const reply = listed[0];
  if (!reply.ok) throw busFailure(reply);
  // a(ssssssouso): name, description, load, active, sub, following, object path, job id, job type, job path.
  const rows = (Array.isArray(reply.body[0]) ? reply.body[0] : []) as unknown[][];
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  const list = rows
    // As `systemctl list-units` without --all: a unit that follows another (a swap's alias) is not listed twice.
    .filter((r) => str(r[5]) === "")
    .map((r) => ({
      unit: str(r[0]),
      description: str(r[1]),
      load: str(r[2]),
      active: str(r[3]),
      sub: str(r[4]),
      path: str(r[6]),
    }))
    .filter((u) => u.unit !== "" && u.path !== "");
  const shown = new Map<string, ShowBlock>();
  const asked = list.slice(0, FAILED_ASKED_AT_MOST);
  const stamps = ["InactiveEnterTimestamp", "InactiveEnterTimestampMonotonic"];
  const calls = asked.flatMap((u) => stamps.map((p) => getProperty(u.path, UNIT_INTERFACE, p)));
  // The timestamps are a bonus, as with the command: without them the list still answers.
  const replies = calls.length > 0 ? await bus.ask(calls, remaining()).catch(() => undefined) : [];
  asked.forEach((u, i) => {
    const at = replies?.[2 * i];
    const mono = replies?.[2 * i + 1];
    shown.set(u.unit, {
      Id: u.unit,
      InactiveEnterTimestamp: at?.ok ? unixStamp(at.body[0]) : "",
      InactiveEnterTimestampMonotonic: mono?.ok ? String(mono.body[0] ?? 0) : "0",
    });
  });
  return { list: list.map(({ path: _path, ...u }) => u), shown };
}
