/**
 * A webcheck screenshot for the page's <img>: only a PNG that webcheck's own `screenshots` tool lists right
 * now, so the route cannot read any other file.
 */
import { createReadStream } from "node:fs";
import type { ServerResponse } from "node:http";
import { z } from "zod";
import type { GatewayOptions } from "../gateway.ts";

const listed = z.object({ files: z.array(z.object({ path: z.string() })) });

export async function sendScreenshot(
  path: string,
  res: ServerResponse,
  options: GatewayOptions,
  signal: AbortSignal,
): Promise<void> {
  const r = await options.attacher.call("webcheck", "screenshots", {}, { signal });
  const known = listed.parse(r.result).files.some((s) => s.path === path);
  if (!known || !path.endsWith(".png")) {
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { code: "E_INVALID_INPUT", message: "not a screenshot webcheck lists" } }));
    return;
  }
  res.writeHead(200, { "content-type": "image/png", "cache-control": "no-store", "x-content-type-options": "nosniff" });
  createReadStream(path)
    .on("error", () => res.destroy())
    .pipe(res);
}
