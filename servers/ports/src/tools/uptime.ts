/** uptime: how long the machine has been up and its load, from /proc (an example tool: replace it). */
import { readFile } from "node:fs/promises";
import { DiagError } from "@roadnerd/conventions";
import { z } from "zod";
import { defineTool } from "../kit.ts";

async function readProc(path: string, signal: AbortSignal): Promise<string> {
  try {
    return await readFile(path, { encoding: "utf8", signal });
  } catch (err) {
    throw new DiagError("E_UNSUPPORTED", `cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
}

export const uptime = defineTool({
  name: "uptime",
  summary: "How long this machine has been up, and its load average.",
  input: {},
  output: {
    uptime_s: z.number().int().min(0).describe("seconds since boot"),
    load: z.array(z.number().min(0)).length(3).describe("load average over 1, 5 and 15 minutes"),
  },
  example: {},
  summarize: (r) => `up ${Math.floor(r.uptime_s / 3600)} h, load ${r.load.join(" ")}`,
  async handler(_input, ctx) {
    const [up, loadavg] = await Promise.all([
      readProc("/proc/uptime", ctx.signal),
      readProc("/proc/loadavg", ctx.signal),
    ]);
    const seconds = Number(up.split(" ")[0]);
    const load = loadavg.split(" ").slice(0, 3).map(Number);
    if (!Number.isFinite(seconds) || load.some((n) => !Number.isFinite(n))) {
      throw new DiagError("E_INTERNAL", "could not parse /proc/uptime or /proc/loadavg");
    }
    return { uptime_s: Math.floor(seconds), load };
  },
});
