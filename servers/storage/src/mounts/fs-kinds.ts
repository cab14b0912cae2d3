/**
 * Which filesystem types disk_usage hides by default and which top_consumers never walks. The lists are ours
 * (df hides a similar set without -a); see README "What counts as pseudo".
 */

/** Kernel interfaces and virtual trees: no user data, nothing to fill. */
const PSEUDO = new Set([
  "proc",
  "sysfs",
  "devtmpfs",
  "devpts",
  "mqueue",
  "debugfs",
  "tracefs",
  "securityfs",
  "pstore",
  "bpf",
  "autofs",
  "configfs",
  "fusectl",
  "hugetlbfs",
  "nsfs",
  "binfmt_misc",
  "efivarfs",
  "rpc_pipefs",
  "selinuxfs",
  "ramfs",
  "cgroup",
  "cgroup2",
]);

/** Read-only images (snaps, live media): 100 % used by construction, never the disk that filled up. */
const IMAGE = new Set(["squashfs", "iso9660", "erofs", "cramfs", "udf"]);

/** Filesystems whose server may stall: a stat there can block for minutes, so top_consumers never walks them. */
const NETWORK = new Set([
  "nfs",
  "nfs4",
  "cifs",
  "smb3",
  "smbfs",
  "ceph",
  "glusterfs",
  "afs",
  "lustre",
  "9p",
  "fuse",
  "davfs",
  "sshfs",
]);

/** Hidden by disk_usage unless include_pseudo: kernel pseudo filesystems and read-only images. */
export function isPseudoFs(fs: string): boolean {
  return PSEUDO.has(fs) || IMAGE.has(fs);
}

/** Network filesystems and FUSE (except fuseblk, a local disk through FUSE such as ntfs-3g). */
export function isNetworkFs(fs: string): boolean {
  return NETWORK.has(fs) || (fs.startsWith("fuse.") && fs !== "fuse.fuseblk");
}

/**
 * Filesystems answered by the kernel from memory or a local disk: statfs there does not stall, so disk_usage
 * asks it synchronously (a thread-pool hop per mount cost more than the call). Anything else (network, FUSE,
 * autofs, which may mount on access, an unknown type) keeps the single-flight call with a deadline.
 */
const LOCAL = new Set([
  ...[...PSEUDO].filter((fs) => fs !== "autofs"),
  ...IMAGE,
  "ext2",
  "ext3",
  "ext4",
  "xfs",
  "btrfs",
  "tmpfs",
  "overlay",
  "vfat",
  "msdos",
  "exfat",
  "ntfs3",
  "f2fs",
  "jfs",
  "nilfs2",
  "bcachefs",
  "hfsplus",
]);

export function isLocalFs(fs: string): boolean {
  return LOCAL.has(fs);
}
