/** JSON bodies: empty means {}, malformed is a typed 400 (Fastify's own parser, so no prototype poisoning). */
import type { FastifyInstance } from "fastify";
import { DiagError } from "../errors/errors.ts";

/** A body that is not JSON: /mcp answers it as a JSON-RPC parse error (−32700). */
export class MalformedJsonError extends DiagError {
  constructor(detail: string) {
    super("E_INVALID_INPUT", `malformed JSON body: ${detail.slice(0, 120)}`);
  }
}

export function registerJsonBody(app: FastifyInstance): void {
  const jsonParser = app.getDefaultJsonParser("error", "error");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = String(body);
    if (text.trim() === "") return done(null, {});
    jsonParser(request, text, (err, value) => {
      if (!err) return done(null, value);
      // Valid JSON with a __proto__ or constructor.prototype key is refused on purpose: say so, not "not JSON".
      const poisoned = /"(__proto__|prototype)"\s*:/.test(text) && isJson(text);
      done(
        poisoned
          ? new DiagError("E_INVALID_INPUT", "keys named __proto__ or constructor.prototype are refused")
          : new MalformedJsonError(err.message),
        undefined,
      );
    });
  });
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
