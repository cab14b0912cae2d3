#!/usr/bin/env bash
# The whole suite N times in a row (default 3) from a fresh clone of HEAD inside a 0700 directory, while a
# CPU-bound job of the machine's size (one busy loop per core, bounded by `timeout`) runs beside it: the check
# that no test rests on wall-clock slack or on where the checkout lives. Cleans up its clone and loops, by PID.
#   bash scripts/under-load.sh [runs]
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
home=$(mktemp -d) # mktemp -d makes it 0700
loops=()
cleanup() {
  ((${#loops[@]})) && kill "${loops[@]}" 2>/dev/null
  rm -rf "$home"
}
trap cleanup EXIT
git clone -q . "$home/rn" && cd "$home/rn" || exit 1
pnpm install --offline --frozen-lockfile >/dev/null || pnpm install --frozen-lockfile >/dev/null || exit 1
for _ in $(seq "$(nproc)"); do
  timeout 7200 sh -c 'while :; do :; done' &
  loops+=($!)
done
failed=0
for n in $(seq "$runs"); do
  started=$SECONDS
  CI=true pnpm test >"$home/run-$n.log" 2>&1
  rc=$?
  summary=$(sed 's/\x1b\[[0-9;]*m//g' "$home/run-$n.log" | grep -E '^ +Tests +[0-9]' | tail -n 1)
  echo "run $n: exit $rc in $((SECONDS - started)) s, load $(cut -d' ' -f1 /proc/loadavg):${summary:- no count}"
  if [ "$rc" != 0 ]; then
    failed=$((failed + 1))
    sed 's/\x1b\[[0-9;]*m//g' "$home/run-$n.log" | grep -E '^ (FAIL|×)' | head -n 20
  fi
done
echo "$((runs - failed)) of $runs runs passed under load"
[ "$failed" = 0 ]
