#!/usr/bin/env bash
# Benchmark: wall time, peak memory and simulated I/Os per wall second of the block workloads —
# the 128-node boot storm (scenarios/ci/boot-storm.json) and random 4 KiB I/O from 128 volumes
# (scenarios/block-4k-random-rados.json) — with the figures each run reports. Prints them; they
# go in the closing notes and docs/models.md ("Block volumes").
# Usage: tests/bench/block_bench.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
granary="$root/$build/cli/granary"
[ -x "$granary" ] || { echo "build granary first ($granary)" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (package time)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for scenario in scenarios/ci/boot-storm.json scenarios/block-4k-random-rados.json; do
  /usr/bin/time -f "%e %M" -o "$work/time" "$granary" run "$root/$scenario" --quiet \
    --out "$work/r.json" > /dev/null 2> "$work/err" || { cat "$work/err" >&2; exit 1; }
  read -r wall rss < "$work/time"
  python3 - "$scenario" "$wall" "$rss" "$work/r.json" <<'PY'
import json, sys
name, wall, rss, path = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
r = json.load(open(path))
s = r["summary"]
ios = s["reads"] + s["writes"]
lat = {k: v * 1e3 for k, v in r["latency_ms"]["read"].items() if k in ("p50", "p99")}  # us
line = ("%s: %.1f s wall, %.0f MiB peak, %d I/Os measured (%.0f per wall second); %.0f IOPS "
        "(bound %.0f, %s), read p50 %.0f us, p99 %.0f us" % (
        name, wall, rss / 1024, ios, ios / wall, s["iops"], r["bounds"]["iops"],
        r["bounds"]["iops_bottleneck"], lat["p50"], lat["p99"]))
if "boot_seconds" in s:
    line += ", boot max %.3f s" % s["boot_seconds"]["max"]
print(line)
PY
done
