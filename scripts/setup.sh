#!/usr/bin/env bash
# Install everything a fresh Debian 12 machine needs to build, run and test RoadNerd MCP:
# the Debian tools the servers and tests use, pnpm (pinned) through npm, then the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

PNPM_VERSION=10.34.8
# iproute2: `ip` for iface_info/route_info, `ip netns` in tests; util-linux: `unshare` for sealed runs;
# curl: the test that runs the README examples; systemd: systemctl/journalctl for the service server and the
# booted-systemd test harness; chromium: webcheck's headless browser. Each server's run-time packages
# (roadnerd.debian) must be here too.
DEB_PACKAGES=(iproute2 util-linux curl systemd chromium)

missing=()
for pkg in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "missing Debian packages (install them as root): ${missing[*]}" >&2
  fi
fi

if [ "$(pnpm --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  npm install -g --no-audit --no-fund "pnpm@$PNPM_VERSION"
fi
if [ "${CI:-}" = "true" ]; then
  pnpm install --frozen-lockfile
else
  pnpm install
fi
