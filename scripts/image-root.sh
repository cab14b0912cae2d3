#!/usr/bin/env bash
# The Dockerfile's slim root filesystems (run inside its `slim` stage, a Debian 12 with Node):
#   image-root.sh <dest>                  Node (symbols stripped), setpriv (every command runs through it: ADR
#                                         0051) and the shared libraries they load, root and
#                                         node (uid 1000) in /etc/passwd and /etc/group, the CA bundle, /tmp
#   image-root.sh <dest> <binary>…        each binary a server runs (its `commands`), its shared libraries and
#                                         its Debian package's files under /etc (iproute2's tables, …)
# Files keep their Debian paths in a merged-/usr layout (/bin, /lib, /lib64, /sbin link into /usr), so the
# loader and the servers' EXEC_PATH find them as on Debian; nothing else of Debian is copied.
set -euo pipefail
dest=$1
shift

# Copy file $1 (links followed) to its canonical directory under $dest, under the name it was asked by.
put() {
  local dir
  dir=$(readlink -f "$(dirname "$1")")
  mkdir -p "$dest$dir"
  cp -L "$1" "$dest$dir/$(basename "$1")"
}

# The file and every shared library it loads (ldd's absolute paths: "libc.so.6 => /lib/…/libc.so.6 (0x…)").
with_libs() {
  put "$1"
  ldd "$1" | grep -oE '/[^ ]+' | while read -r lib; do put "$lib"; done
}

mkdir -p "$dest/usr/bin" "$dest/usr/sbin" "$dest/usr/lib" "$dest/usr/lib64"
for d in bin sbin lib lib64; do [ -e "$dest/$d" ] || ln -s "usr/$d" "$dest/$d"; done

if [ $# -eq 0 ]; then
  with_libs "$(command -v node)"
  strip "$dest$(readlink -f "$(command -v node)")"
  # util-linux (essential in Debian 12): each child gets PR_SET_PDEATHSIG, so it dies with its server.
  with_libs "$(command -v setpriv)"
  mkdir -p "$dest/etc/ssl/certs" "$dest/home/node" "$dest/app"
  mkdir -m 1777 "$dest/tmp"
  chown 1000:1000 "$dest/home/node"
  printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nnode:x:1000:1000::/home/node:/usr/sbin/nologin\n' >"$dest/etc/passwd"
  printf 'root:x:0:\nnode:x:1000:\n' >"$dest/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$dest/etc/nsswitch.conf"
  if [ -f /etc/ssl/certs/ca-certificates.crt ]; then cp /etc/ssl/certs/ca-certificates.crt "$dest/etc/ssl/certs/"; fi
  exit 0
fi

for name in "$@"; do
  bin=$(command -v "$name")
  with_libs "$bin"
  # dpkg knows a file by the path its package shipped (/bin/ip before the /usr merge, /usr/bin/ss after).
  pkg=
  for p in "$bin" {/usr,}/{bin,sbin}/"$name"; do
    pkg=$(dpkg -S "$p" 2>/dev/null | head -n 1 | cut -d: -f1) && [ -n "$pkg" ] && break
  done
  if [ -n "$pkg" ]; then
    dpkg -L "$pkg" | grep '^/etc/' | while read -r f; do if [ -f "$f" ]; then put "$f"; fi; done
  fi
done
