/**
 * What a walk has counted: totals, what was skipped and why, the size of every directory down to the asked
 * depth (by its path below the root), the biggest files down to that depth, and the hard links seen (each
 * counted once, wherever first met).
 */
export interface WalkNode {
  /** Path relative to the walked directory ("log/journal"). */
  name: string;
  type: "dir" | "file";
  bytes: number;
  apparent: number;
}

export interface WalkProgress {
  dirs: number;
  files: number;
  bytes: number;
  apparent: number;
}

export type Skipped = { unreadable: number; other_fs: number; network_fs: number; vanished: number; too_deep: number };

function byBytes(a: WalkNode, b: WalkNode): number {
  return b.bytes - a.bytes || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/** The n biggest of `more` added to `top`, without sorting every directory of a large tree. */
function topN(top: WalkNode[], more: Iterable<WalkNode>, n: number): WalkNode[] {
  let best = top.sort(byBytes).slice(0, n);
  for (const node of more) {
    const last = best[best.length - 1];
    if (best.length >= n && last && byBytes(node, last) >= 0) continue;
    let i = best.length;
    while (i > 0 && byBytes(node, best[i - 1] as WalkNode) < 0) i -= 1;
    best.splice(i, 0, node);
    if (best.length > n) best = best.slice(0, n);
  }
  return best;
}

export class Tally {
  readonly p: WalkProgress;
  readonly skipped: Skipped = { unreadable: 0, other_fs: 0, network_fs: 0, vanished: 0, too_deep: 0 };
  private readonly dirs = new Map<string, WalkNode>();
  private files: WalkNode[] = [];
  private readonly seen = new Set<string>();
  private readonly keepFiles: number;

  constructor(
    private readonly n: number,
    root: { blocks: number; size: number },
  ) {
    this.p = { dirs: 0, files: 0, bytes: root.blocks * 512, apparent: root.size };
    this.keepFiles = n * 2 + 256;
  }

  /** An entry that could not be read, by why: gone meanwhile, a path past PATH_MAX, or no permission. */
  failed(code: string | undefined): void {
    // ELOOP: a directory swapped for a symlink since its parent was listed.
    if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") this.skipped.vanished += 1;
    else if (code === "ENAMETOOLONG") this.skipped.too_deep += 1;
    else this.skipped.unreadable += 1;
  }

  dir(rel: string): WalkNode {
    let node = this.dirs.get(rel);
    if (!node) {
      node = { name: rel, type: "dir", bytes: 0, apparent: 0 };
      this.dirs.set(rel, node);
    }
    return node;
  }

  /** First sight of a hard-linked file? (a later name of the same inode is not counted again) */
  firstLink(key: string): boolean {
    if (this.seen.has(key)) return false;
    this.seen.add(key);
    return true;
  }

  add(chain: readonly WalkNode[], bytes: number, apparent: number, isDir: boolean): void {
    if (!isDir) this.p.files += 1;
    this.p.bytes += bytes;
    this.p.apparent += apparent;
    for (const node of chain) {
      node.bytes += bytes;
      node.apparent += apparent;
    }
  }

  file(rel: string, bytes: number, apparent: number): void {
    this.files.push({ name: rel, type: "file", bytes, apparent });
    if (this.files.length > this.keepFiles) this.files = this.files.sort(byBytes).slice(0, this.n);
  }

  entries(): WalkNode[] {
    return topN([...this.files], this.dirs.values(), this.n).map((e) => ({ ...e }));
  }
}
