#!/usr/bin/env bash
# Benchmark: wall time of the CI suite (granary test scenarios/ci, one job and all cores) and
# wall time and peak memory of a 1,000-OSD host-failure recovery (tests/bench/data). Prints the
# figures; they go in the closing notes and docs/models.md.
# Usage: tests/bench/failure_bench.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
granary="$root/$build/cli/granary"
[ -x "$granary" ] || { echo "build granary first ($granary)" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (package time)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for jobs in 1 "$(nproc)"; do
  start=$(date +%s.%N)
  "$granary" test "$root/scenarios/ci" --jobs "$jobs" > "$work/suite.txt" || { cat "$work/suite.txt"; exit 1; }
  end=$(date +%s.%N)
  printf 'CI suite (%s), %s job(s): %.1f s wall\n' "$(tail -1 "$work/suite.txt")" "$jobs" \
    "$(python3 -c "print($end - $start)")"
done

/usr/bin/time -f "%e %M" -o "$work/time" "$granary" run "$root/tests/bench/data/host-failure-1000-osds.json" \
  --quiet --out "$work/r.json" > /dev/null 2> "$work/err" || { cat "$work/err" >&2; exit 1; }
read -r wall rss < "$work/time"
python3 - "$wall" "$rss" "$work/r.json" <<'PY'
import json, sys
wall, rss, path = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
r = json.load(open(path))
rec = r["recovery"]
span = rec["recovery_finished_at_s"] - rec["recovery_started_at_s"]
print("1,000-OSD host failure: %.1f s wall, %.0f MiB peak; %.0f GB moved (%.2fx the minimum) in "
      "%.2f s simulated (%.0f GB/s), %d PGs, full redundancy %.2f s after the failure" % (
      wall, rss / 1024, rec["bytes_moved"] / 1e9, rec["moved_over_minimum"], span,
      rec["bytes_moved"] / 1e9 / span if span > 0 else 0, rec["pgs_moved"],
      rec["time_to_full_redundancy_s"]))
PY
