/**
 * A doc's `pnpm new-server <name>` example where that server exists already (whoever followed the doc has
 * it): the same lines with the first free `<name>-<n>` in its place, so the doc's steps still run on that tree.
 */
export function asRunHere(
  lines: readonly string[],
  exists: (server: string) => boolean,
): { lines: string[]; created: string[] } {
  let out = [...lines];
  const created: string[] = [];
  for (const line of lines) {
    const name = /^pnpm new-server ([a-z0-9-]+)/.exec(line)?.[1];
    if (!name) continue;
    let free = name;
    for (let n = 2; exists(free) && n < 100; n++) free = `${name}-${n}`;
    const word = new RegExp(`(?<!\\w)${name}(?![\\w-])`, "g");
    if (free !== name) out = out.map((l) => l.replace(word, free));
    created.push(free);
  }
  return { lines: out, created };
}
