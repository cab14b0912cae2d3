/**
 * `systemctl show --property=…` output: `Key=Value` lines, one block per unit separated by a blank line. Values
 * run to the end of the line (a description may hold `=`); unknown keys are kept, repeated keys take the last.
 */
export type ShowBlock = Record<string, string>;

export function parseShow(text: string): ShowBlock[] {
  const blocks: ShowBlock[] = [];
  let current: ShowBlock | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\r$/, "");
    if (line === "") {
      current = undefined;
      continue;
    }
    const eq = line.indexOf("=");
    if (eq <= 0) continue;
    if (!current) {
      current = {};
      blocks.push(current);
    }
    current[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return blocks;
}
