#!/usr/bin/env bash
# Benchmark: mappings per second of `granary crush test` against Ceph's `crushtool --test` on
# the same 1,000-OSD map and 200,000 inputs, run side by side, outputs compared byte for byte.
# Usage: tests/bench/crush_vs_crushtool.sh [BUILD_DIR]   (needs crushtool: package ceph-base)
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
granary="$root/$build/cli/granary"
map="$root/tests/bench/data/crush-1000-osds.txt"
command -v crushtool >/dev/null || { echo "crushtool not installed (apt-get install ceph-base)" >&2; exit 1; }
[ -x "$granary" ] || { echo "build granary first ($granary)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
crushtool -c "$map" -o "$work/map.bin"

runs=${RUNS:-5}
best() {  # best wall time in seconds of $runs runs of "$@" > $work/out
  local best=""
  for _ in $(seq "$runs"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" > "$work/out"
    t1=$(date +%s.%N)
    best=$(python3 -c "t=$t1-$t0; b='$best'; print(t if not b or t < float(b) else b)")
  done
  echo "$best"
}

printf "%-34s %12s %12s %14s %14s %8s\n" case inputs crushtool_s granary_s granary_map/s speedup
for case in "rep3 chooseleaf firstn host:--rule 0 --num-rep 3" "ec 8+3 chooseleaf indep host:--rule 1 --num-rep 11"; do
  name=${case%%:*}
  args="${case#*:} --min-x 0 --max-x 199999 --show-mappings"
  tc=$(best crushtool -i "$work/map.bin" --test $args)
  cp "$work/out" "$work/crushtool.out"
  tg=$(best "$granary" crush test --map "$map" $args)
  if ! cmp -s "$work/out" "$work/crushtool.out"; then
    echo "OUTPUT DIFFERS for $name" >&2
    exit 1
  fi
  python3 - "$name" "$tc" "$tg" <<'PY'
import sys
name, tc, tg = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
n = 200000
print("%-34s %12d %12.3f %14.3f %14.0f %7.2fx" % (name, n, tc, tg, n / tg, tc / tg))
PY
done
echo "outputs identical (byte for byte); best of $runs runs each; granary time includes parsing the text map"
