/**
 * fast-check arbitraries from a tool's own input JSON Schema (the subset zod writes for our tools: objects,
 * strings with bounds and patterns, integers and numbers with bounds, booleans, enums, arrays, anyOf), plus
 * hostile mutations of what they make: the inputs a confused model or an attacker would send.
 */
import fc from "fast-check";

type Schema = Record<string, unknown>;

/** Values no field should ever take: option-looking, control characters, traversal, shell, look-alikes, huge. */
export const HOSTILE_VALUES: readonly unknown[] = [
  "",
  "-x",
  "--help",
  "-oProxyCommand=id",
  "=",
  "a\u0000b",
  "a\nb",
  "\r\n",
  "../../../etc/passwd",
  "/proc/self/environ",
  "$(id)",
  "`id`",
  "; id",
  "| id",
  "&& id",
  "%00",
  "\u2010help",
  "\u2212x",
  "\uff0dx",
  "\uff11\uff12\uff17.\uff10.\uff10.\uff11",
  "ex\u0430mple.com",
  "\u202eevil",
  "x".repeat(5000),
  "y".repeat(65 * 1024),
  "<script>alert(1)</script>",
  "http://169.254.169.254/latest/meta-data/",
  "file:///etc/passwd",
  0,
  -1,
  1.5,
  2 ** 53 + 2,
  -(2 ** 31),
  1e308,
  true,
  null,
  [],
  ["a"],
  {},
  { __proto__: { polluted: true } },
  { a: { b: { c: { d: { e: { f: { g: 1 } } } } } } },
];

export const HOSTILE_KEYS = ["__proto__", "constructor", "prototype", "toString", "Run_Id", " name", "x".repeat(300)];

function numberArb(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = typeof s.minimum === "number" ? s.minimum : integer ? -(2 ** 31) : -1e9;
  const max = typeof s.maximum === "number" ? s.maximum : integer ? 2 ** 31 : 1e9;
  return integer ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

function stringArb(s: Schema): fc.Arbitrary<string> {
  const minLength = typeof s.minLength === "number" ? s.minLength : 0;
  const maxLength = Math.min(typeof s.maxLength === "number" ? s.maxLength : 64, 256);
  if (typeof s.pattern === "string") {
    try {
      return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length >= minLength && v.length <= maxLength);
    } catch {
      // A pattern fast-check cannot generate from: plain strings below.
    }
  }
  return fc.oneof(
    fc.string({ minLength, maxLength }),
    // Plausible targets, including addresses this sealed run has no route to (the laptop with no network).
    fc.constantFrom(
      "example.com",
      "127.0.0.1",
      "::1",
      "localhost",
      "192.0.2.53",
      "198.51.100.7",
      "2001:db8::53",
      "http://127.0.0.1:1/",
      "https://example.com/",
      "http://192.0.2.80/",
      "http://[2001:db8::80]:8080/",
    ),
  );
}

/** Values that fit the schema's JSON shape (its zod refinements may still refuse them: that is fine). */
export function valueArb(schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if ("const" in schema) return fc.constant(schema.const);
  const anyOf = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (anyOf?.length) return fc.oneof(...anyOf.map((s) => valueArb(s, depth)));
  switch (schema.type) {
    case "string":
      return stringArb(schema);
    case "integer":
      return numberArb(schema, true);
    case "number":
      return numberArb(schema, false);
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return depth > 3
        ? fc.constant([])
        : fc.array(valueArb((schema.items ?? {}) as Schema, depth + 1), { maxLength: 4 });
    case "object":
      return depth > 3 ? fc.constant({}) : objectArb(schema, depth + 1);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

export function objectArb(schema: Schema, depth = 0): fc.Arbitrary<Record<string, unknown>> {
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, s] of Object.entries(props)) record[k] = valueArb(s, depth);
  return fc.record(record, { requiredKeys: [...required].filter((k) => k in props) }) as fc.Arbitrary<
    Record<string, unknown>
  >;
}

/** One hostile change to an input: a field set to a hostile value, a hostile key added, or a required key dropped. */
export function mutated(schema: Schema, base: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<unknown> {
  const keys = Object.keys((schema.properties ?? {}) as Record<string, unknown>);
  const required = (schema.required as string[] | undefined) ?? [];
  const field = keys.length ? fc.constantFrom(...keys) : fc.constant("x");
  return fc.oneof(
    fc.tuple(base, field, fc.constantFrom(...HOSTILE_VALUES)).map(([input, k, v]) => ({ ...input, [k]: v })),
    fc.tuple(base, fc.constantFrom(...HOSTILE_KEYS), fc.constantFrom(...HOSTILE_VALUES)).map(([input, k, v]) => {
      const out: Record<string, unknown> = { ...input };
      Object.defineProperty(out, k, { value: v, enumerable: true, configurable: true, writable: true });
      return out;
    }),
    required.length
      ? fc.tuple(base, fc.constantFrom(...required)).map(([input, k]) => {
          const { [k]: _dropped, ...rest } = input;
          return rest;
        })
      : base,
    fc.constantFrom(...HOSTILE_VALUES),
  );
}

/** The tool's own valid example with one field varied: mostly valid inputs, reaching deep into the handler. */
export function nearExample(schema: Schema, example: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  const props = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
  if (props.length === 0) return fc.constant(example);
  return fc.constantFrom(...props).chain(([key, s]) => valueArb(s).map((value) => ({ ...example, [key]: value })));
}

/** Inputs for a tool: well-shaped, near its example, or hostile. */
export function inputArb(schema: Schema, example: Record<string, unknown> = {}): fc.Arbitrary<unknown> {
  const base = objectArb(schema);
  return fc.oneof(
    { arbitrary: base, weight: 2 },
    { arbitrary: nearExample(schema, example), weight: 3 },
    { arbitrary: mutated(schema, base), weight: 3 },
  );
}
