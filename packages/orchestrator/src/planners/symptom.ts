/**
 * What the rules planner understands of a symptom: which path it takes (a port, the disk, a service, a proxy,
 * the network) or that it understood none (`unknown`, never a guess), plus the port or unit it names. The
 * label words themselves (`disk_full`, `port_conflict`, `dns`…) pick their path, and "<unit> won't start /
 * keeps restarting" is a service. An empty symptom is the network checks (`roadnerd triage` with no words).
 */
export type Topic = "port" | "disk" | "service" | "proxy" | "network";

/** Checked in this order: "nginx won't start: port 80 in use" is a port conflict before it is a service. */
const TOPICS: ReadonlyArray<[Topic, RegExp]> = [
  ["port", /\bport\b|port_conflict|eaddrinuse|address already in use|already in use/],
  ["disk", /\bdisk\b|disk_full|no space|space left|enospc|\bfull\b|storage/],
  ["proxy", /\bproxy\b|\bsso\b|\bidp\b|\b407\b/],
  [
    "service",
    /\bservice\b|\bunit\b|systemd|daemon|\.service\b|(won't|will not|doesn't|does not|can't|cannot|fails? to|refuses to) (start|come up|run)|keeps? (re)?starting|keeps? crashing|restart(ing)? loop|crash(es|ing)? (on|at) (start|boot)/,
  ],
  [
    "network",
    /internet|wi-?fi|wlan|ethernet|network|online|offline|connect|web ?sites?|web ?pages?|\bpages?\b|brows(e|er|ing)|\bloads?\b|\bdns\b|resolv|\broute|routing|gateway|captive|portal|hotspot|hotel|\bping\b|\burl\b|https?\b|\bvpn\b/,
  ],
];

/** Curly apostrophes as straight ones, lower case: "Won’t" reads as "won't". */
const normal = (symptom: string) => symptom.replace(/[\u2018\u2019]/g, "'").toLowerCase();

/** The path a symptom takes, or `unknown` when it names nothing the rules know ("my laptop is slow"). */
export function topicOf(symptom: string): Topic | "unknown" {
  const text = normal(symptom);
  if (text.trim() === "") return "network";
  return TOPICS.find(([, words]) => words.test(text))?.[0] ?? "unknown";
}

/** The port a symptom names (default 8080, the spec's scenario). */
export function portOf(symptom: string): number {
  const m = /\b(?:port\s*:?\s*|:)(\d{1,5})\b/i.exec(symptom) ?? /\b(\d{2,5})\b/.exec(symptom);
  const n = Number(m?.[1]);
  return Number.isInteger(n) && n >= 1 && n <= 65535 ? n : 8080;
}

/** The unit a symptom names: `x.service`, or the word before "won't start" / "keeps restarting". */
export function unitOf(symptom: string): string | undefined {
  const text = normal(symptom);
  const named = /\b([a-z0-9][a-z0-9@._-]*\.service)\b/.exec(text)?.[1];
  if (named) return named;
  const before =
    /\b([a-z0-9][a-z0-9@._-]*) (?:service |daemon )?(?:won't|will not|doesn't|does not|can't|cannot|fails? to|refuses to|keeps?)\b/.exec(
      text,
    )?.[1];
  return before && !STOP_WORDS.has(before) ? before : undefined;
}

/** Words before "won't start" that are not a unit ("it won't start", "app keeps crashing" is still named). */
const STOP_WORDS = new Set([
  "it",
  "this",
  "that",
  "service",
  "daemon",
  "server",
  "unit",
  "thing",
  "computer",
  "laptop",
]);

/** For `unknown`: what was read of the symptom, so the caller can say it better. */
export function notUnderstood(symptom: string): string {
  const words =
    normal(symptom)
      .match(/[a-z0-9']+/g)
      ?.slice(0, 8) ?? [];
  return `the symptom (${words.join(" ") || "no words"}) names no network, port, disk, service or proxy trouble the rules know; say what fails, e.g. "no internet", "port 8080 in use", "nginx won't start", "disk full"`;
}
