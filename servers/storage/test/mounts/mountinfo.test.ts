/**
 * The mount-table parser on a recorded /proc/self/mountinfo (this Debian 12 VM, with a tmpfs mounted at a
 * path with a space and bound at one with a tab and a backslash), on lines written to the format of proc(5)
 * for what this machine does not have (optional fields, NFS, snaps), and on the live table.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { groupByDevice } from "../../src/mounts/dedupe.ts";
import { isNetworkFs, isPseudoFs } from "../../src/mounts/fs-kinds.ts";
import { decodeOctal, parseMountinfo, readMountinfo, visibleMounts } from "../../src/mounts/mountinfo.ts";

const recorded = readFileSync(join(import.meta.dirname, "../fixtures/mountinfo-debian12.txt"), "utf8");

describe("parseMountinfo", () => {
  const entries = parseMountinfo(recorded);

  it("reads every line of the recorded table", () => {
    expect(entries).toHaveLength(recorded.trim().split("\n").length);
    expect(entries.find((e) => e.mount === "/")).toEqual({
      id: 27,
      parent: 1,
      device: "254:0",
      root: "/",
      mount: "/",
      fs: "ext4",
      source: "/dev/vda",
      readOnly: false,
    });
  });

  it("decodes the kernel's octal escapes: space, tab, backslash", () => {
    expect(entries.map((e) => e.mount)).toContain("/tmp/rec/with space");
    expect(entries.map((e) => e.mount)).toContain("/tmp/rec/tab\tand\\back");
    expect(decodeOctal("a\\040b\\012c\\134d")).toBe("a b\nc\\d");
  });

  it("reads optional fields, the bind mount's root and read-only from either option list", () => {
    expect(entries.find((e) => e.mount === "/run/netns")).toMatchObject({ device: "254:0", root: "/run/netns" });
    expect(entries.find((e) => e.mount === "/mnt/sandboxing/model_tools_env/v1/python")?.readOnly).toBe(true);
    const [a, b] = parseMountinfo(
      [
        "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 shared:7 - ext3 /dev/root ro,errors=continue",
        "61 25 0:53 / /home/u/nfs rw,relatime shared:9 - nfs4 server.example:/export rw,vers=4.2",
      ].join("\n"),
    );
    expect(a).toMatchObject({ mount: "/mnt2", root: "/mnt1", fs: "ext3", source: "/dev/root", readOnly: true });
    expect(b).toMatchObject({ fs: "nfs4", source: "server.example:/export", readOnly: false });
  });

  it("skips lines that are not mountinfo", () => {
    expect(parseMountinfo("garbage\n\n1 2 3\n")).toEqual([]);
  });
});

describe("visibleMounts and groupByDevice", () => {
  it("keeps the top mount of a directory mounted over", () => {
    const t = parseMountinfo(
      ["30 1 0:40 / /data rw - tmpfs first rw", "31 30 0:41 / /data rw - tmpfs second rw"].join("\n"),
    );
    expect(visibleMounts(t).map((e) => e.source)).toEqual(["second"]);
  });

  it("groups a filesystem's mounts: the first whole mount first, binds of subtrees after", () => {
    const groups = groupByDevice(parseMountinfo(recorded));
    const root = groups.find((g) => g.primary.mount === "/");
    expect(root?.others.map((o) => o.mount)).toEqual(["/run/netns"]);
    const spaced = groups.find((g) => g.primary.mount === "/tmp/rec/with space");
    expect(spaced?.others.map((o) => o.mount)).toEqual(["/tmp/rec/tab\tand\\back"]);
  });
});

describe("filesystem kinds", () => {
  it("hides kernel pseudo filesystems and images, keeps tmpfs and overlay", () => {
    for (const fs of ["proc", "sysfs", "cgroup2", "devpts", "devtmpfs", "squashfs", "nsfs"])
      expect(isPseudoFs(fs)).toBe(true);
    for (const fs of ["tmpfs", "overlay", "ext4", "btrfs", "xfs", "vfat", "nfs4"]) expect(isPseudoFs(fs)).toBe(false);
  });

  it("treats network filesystems and FUSE (but fuseblk) as ones that may stall", () => {
    for (const fs of ["nfs", "nfs4", "cifs", "smb3", "fuse.sshfs", "9p"]) expect(isNetworkFs(fs)).toBe(true);
    for (const fs of ["ext4", "tmpfs", "fuseblk", "overlay"]) expect(isNetworkFs(fs)).toBe(false);
  });
});

describe("the live table", () => {
  it("has the root filesystem and /proc", async () => {
    const live = await readMountinfo();
    expect(live.find((e) => e.mount === "/")).toBeDefined();
    expect(live.find((e) => e.mount === "/proc")?.fs).toBe("proc");
  });
});
