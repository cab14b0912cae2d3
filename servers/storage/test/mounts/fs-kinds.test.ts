/** Which filesystems disk_usage asks synchronously: only those whose statfs cannot stall (ADR 0043). */
import { describe, expect, it } from "vitest";
import { isLocalFs, isNetworkFs } from "../../src/mounts/fs-kinds.ts";

describe("isLocalFs", () => {
  it("is true for disks, memory and kernel filesystems", () => {
    for (const fs of ["ext4", "xfs", "btrfs", "tmpfs", "overlay", "vfat", "proc", "sysfs", "cgroup2", "squashfs"])
      expect(isLocalFs(fs), fs).toBe(true);
  });

  it("is false for network and FUSE mounts, autofs (mounts on access) and any type it does not know", () => {
    for (const fs of ["nfs", "nfs4", "cifs", "fuse", "fuse.sshfs", "fuse.fuseblk", "autofs", "9p", "zz-new-fs", ""])
      expect(isLocalFs(fs), fs).toBe(false);
  });

  it("never calls a network filesystem local", () => {
    for (const fs of ["nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "afs", "lustre", "9p", "fuse"])
      expect(isNetworkFs(fs) && isLocalFs(fs), fs).toBe(false);
  });
});
