/** JSON bodies: empty means {}, malformed is a typed 400 (Fastify's own parser, so no prototype poisoning). */
import type { FastifyInstance } from "fastify";
import { DiagError } from "../errors.ts";

export function registerJsonBody(app: FastifyInstance): void {
  const jsonParser = app.getDefaultJsonParser("error", "error");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = String(body);
    if (text.trim() === "") return done(null, {});
    jsonParser(request, text, (err, value) =>
      err
        ? done(new DiagError("E_INVALID_INPUT", `malformed JSON body: ${err.message.slice(0, 120)}`), undefined)
        : done(null, value),
    );
  });
}
