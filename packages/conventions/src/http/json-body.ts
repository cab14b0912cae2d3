/** JSON bodies: empty means {}, malformed is a typed 400 (Fastify's own parser, so no prototype poisoning). */
import type { FastifyInstance } from "fastify";
import { DiagError } from "../errors.ts";

export function registerJsonBody(app: FastifyInstance): void {
  const jsonParser = app.getDefaultJsonParser("error", "error");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = String(body);
    if (text.trim() === "") return done(null, {});
    jsonParser(request, text, (err, value) => {
      if (!err) return done(null, value);
      // Valid JSON with a __proto__ or constructor.prototype key is refused on purpose: say so, not "not JSON".
      const poisoned = /"(__proto__|prototype)"\s*:/.test(text) && isJson(text);
      const message = poisoned
        ? "keys named __proto__ or constructor.prototype are refused"
        : `malformed JSON body: ${err.message.slice(0, 120)}`;
      done(new DiagError("E_INVALID_INPUT", message), undefined);
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
