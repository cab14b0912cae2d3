/**
 * Memory over a day's worth of calls: RSS every 1,000 of 10,000 mixed calls (every tool's example, deadlines
 * varied so sharing does not hide the work, 8 at a time), then every 10 s of an idle minute.
 */
import type { AnyTool } from "@roadnerd/conventions";
import { f1, rssMb } from "./lib.ts";

export async function benchRssCurve(
  url: string,
  pid: number,
  tools: readonly AnyTool[],
  calls: number,
  idleSeconds: number,
): Promise<void> {
  const points: string[] = [`0:${f1(rssMb(pid))}`];
  let done = 0;
  const one = async (i: number) => {
    const tool = tools[i % tools.length] as AnyTool;
    const res = await fetch(`${url}/actions/${tool.name}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...tool.example, timeout_ms: 1000 + (i % 50) }),
    });
    await res.arrayBuffer();
  };
  for (let i = 0; i < calls; i += 8) {
    await Promise.all(Array.from({ length: 8 }, (_, k) => one(i + k)));
    done += 8;
    if (done % 1000 === 0) points.push(`${done}:${f1(rssMb(pid))}`);
  }
  const idle: string[] = [];
  for (let s = 10; s <= idleSeconds; s += 10) {
    await new Promise((r) => setTimeout(r, 10_000));
    idle.push(`${s}s:${f1(rssMb(pid))}`);
  }
  console.log(`  RSS MB over ${calls} mixed calls (calls:MB): ${points.join(" ")}`);
  console.log(`  RSS MB over an idle ${idleSeconds} s: ${idle.join(" ")}`);
}
