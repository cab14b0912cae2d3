/**
 * The command line, parsed by a schema like every other boundary: node:util's parseArgs splits the words
 * (flags, positionals), then one zod schema per command says which flags it takes, their ranges, and what its
 * positionals are (`key=value` params, server or scenario names). Anything that does not fit is one UsageError
 * line naming the flag and what was expected.
 */
import { parseArgs } from "node:util";
import { MAX_TIMEOUT_MS, runIdField } from "@roadnerd/conventions";
import { MIN_TIMEOUT_MS } from "@roadnerd/conventions/internal";
import { z } from "zod";
import { MAX_STEP_BUDGET } from "../config.ts";
import { UsageError } from "../errors.ts";
import { SCENARIOS } from "../eval/scenarios.ts";
import { type HelpTopic, isHelpTopic } from "./help.ts";

/** Every flag as parseArgs reads it; which command takes which is the schema's business. */
const FLAGS = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "V" },
  planner: { type: "string" },
  symptom: { type: "string" },
  script: { type: "string" },
  budget: { type: "string" },
  "timeout-ms": { type: "string" },
  http: { type: "boolean" },
  port: { type: "string" },
  out: { type: "string" },
  world: { type: "string" },
  "run-id": { type: "string" },
  set: { type: "string", multiple: true },
  processes: { type: "boolean" },
  host: { type: "string" },
} as const;

/** An integer flag: digits only, within bounds; `due` says what was expected. */
const intFlag = (min: number, max: number, due: string) =>
  z
    .string()
    .regex(/^\d+$/, { error: due })
    .transform(Number)
    .pipe(z.number().min(min, { error: due }).max(max, { error: due }));

/** `key=value` as one tool param: JSON where the value reads as a number, boolean, null, object or list. */
const keyValue = z
  .string()
  .regex(/^[^=]+=/s, { error: "expected key=value" })
  .transform((arg): [string, unknown] => {
    const eq = arg.indexOf("=");
    const raw = arg.slice(eq + 1);
    if (!/^(-?\d+(\.\d+)?|true|false|null|\{.*\}|\[.*\])$/s.test(raw)) return [arg.slice(0, eq), raw];
    try {
      return [arg.slice(0, eq), JSON.parse(raw)];
    } catch {
      return [arg.slice(0, eq), raw];
    }
  });

const scenarioName = z.string().refine((name) => SCENARIOS.some((s) => s.name === name), {
  error: `expected a scenario: ${SCENARIOS.map((s) => s.name).join(", ")}`,
});

const json = z.boolean().default(false);
const planner = z.enum(["rules", "openai", "scripted"], { error: "expected rules, openai or scripted" }).optional();
const port = intFlag(0, 65535, "expected 0-65535").optional();
const none = z.tuple([], { error: "takes no arguments" });
/** Which machine (ROADNERD_HOSTS): the name is checked against the hosts file once it is read (main.ts). */
const host = z.string().min(1, { error: "expected a host name" }).optional();

const commandLine = z.discriminatedUnion("command", [
  z.strictObject({ command: z.literal("list"), json, args: none }),
  z.strictObject({
    command: z.literal("call"),
    json,
    host,
    args: z.tuple([z.string({ error: "expected <server>/<tool>" })], keyValue),
  }),
  z.strictObject({
    command: z.literal("triage"),
    json,
    host,
    planner,
    symptom: z.string().default(""),
    script: z.string().min(1).optional(),
    budget: intFlag(0, MAX_STEP_BUDGET, `expected 0-${MAX_STEP_BUDGET} tool calls`).optional(),
    "timeout-ms": intFlag(MIN_TIMEOUT_MS, MAX_TIMEOUT_MS, `expected ${MIN_TIMEOUT_MS}-${MAX_TIMEOUT_MS}`).optional(),
    // The caller's own id (RoadNerd's), so its logs join ours: the servers' rule for a run_id.
    "run-id": runIdField,
    // `roadnerd triage no internet`: the words are the symptom, as --symptom is.
    args: z.array(z.string()),
  }),
  z.strictObject({ command: z.literal("mcp"), http: z.boolean().default(false), port, planner, args: none }),
  z.strictObject({
    command: z.literal("up"),
    port,
    planner,
    set: z.array(z.string()).default([]),
    processes: z.boolean().default(false),
    args: z.array(z.string()),
  }),
  z.strictObject({
    command: z.literal("eval"),
    out: z.string().min(1).optional(),
    world: z.string().optional(),
    args: z.array(scenarioName),
  }),
]);

export type CommandLine = z.output<typeof commandLine>;

/** One line for the first thing that does not fit, naming the flag or argument and what came. */
function describe(issue: z.core.$ZodIssue, input: Record<string, unknown>, args: readonly string[]): string {
  const command = String(input.command);
  if (issue.code === "unrecognized_keys") {
    return `${issue.keys.map((k) => `--${k}`).join(", ")}: not a flag of \`roadnerd ${command}\``;
  }
  const [key, index] = issue.path;
  if (key === "command") return `unknown command ${command.slice(0, 40)}`;
  if (key === "args") {
    const got = typeof index === "number" ? args[index] : undefined;
    return `roadnerd ${command}: ${issue.message}${got === undefined ? "" : `, got ${got.slice(0, 60)}`}`;
  }
  return `--${String(key)}: ${issue.message}, got ${String(input[String(key)]).slice(0, 60)}`;
}

/** Help: all of it, or one command's (`topic`); `asked` is false when no command was given at all. */
export type HelpRequest = { help: true; asked: boolean; topic?: HelpTopic };

/**
 * A flag parseArgs does not know, said in our words: a tool's param given as a flag (`--path /tmp`) gets the
 * key=value form it meant.
 */
function unknownFlag(e: unknown, argv: readonly string[]): string {
  const text = e instanceof Error ? e.message : String(e);
  const flag = /Unknown option '(-{1,2}[^']+)'/.exec(text)?.[1];
  if (!flag) return text.split(". ")[0] ?? text;
  const command = argv.find((w) => !w.startsWith("-")) ?? "";
  const name = flag.replace(/^-+/, "").split("=")[0] ?? "";
  const next = argv[argv.indexOf(flag) + 1];
  const value = flag.includes("=") ? flag.slice(flag.indexOf("=") + 1) : next && !next.startsWith("-") ? next : "…";
  if (command === "call") {
    return `${flag.split("=")[0]}: not a flag of \`roadnerd call\`; tool params are key=value words: ${name}=${value}`;
  }
  return `${flag.split("=")[0]}: not a flag of \`roadnerd${command ? ` ${command}` : ""}\``;
}

/** The command line as one typed command, help, or the version. */
export function parseCommandLine(argv: readonly string[]): CommandLine | HelpRequest | { version: true } {
  let words: ReturnType<typeof split>;
  try {
    words = split(argv);
  } catch (e) {
    throw new UsageError(unknownFlag(e, argv));
  }
  const { values, positionals } = words;
  const [command, ...args] = positionals;
  const { help, version, ...flags } = values;
  if (version || command === "version") return { version: true };
  if (command === "help") {
    const [topic] = args;
    if (topic !== undefined && !isHelpTopic(topic))
      throw new UsageError(`roadnerd help: no command ${topic.slice(0, 40)}`);
    return { help: true, asked: true, ...(topic ? { topic } : {}) };
  }
  if (help || command === undefined) {
    return { help: true, asked: help === true, ...(isHelpTopic(command) ? { topic: command } : {}) };
  }
  const input = { command, ...flags, args };
  const parsed = commandLine.safeParse(input);
  if (parsed.success) return symptomWords(parsed.data);
  const [first] = parsed.error.issues;
  throw new UsageError(first ? describe(first, input, args) : `roadnerd ${command}: invalid arguments`);
}

/** triage's positional words as its symptom; both forms at once is ambiguous. */
function symptomWords(line: CommandLine): CommandLine {
  if (line.command !== "triage" || line.args.length === 0) return line;
  if (line.symptom) throw new UsageError("roadnerd triage: the symptom twice (--symptom and words); give one");
  return { ...line, symptom: line.args.join(" "), args: [] };
}

function split(argv: readonly string[]) {
  return parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: FLAGS });
}
