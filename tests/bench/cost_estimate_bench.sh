#!/usr/bin/env bash
# Benchmark: the cost estimate (`granary validate --json`) against the measured wall time and
# peak memory of `granary run` on every shipped scenario (or the files given). Prints a table
# (markdown) with the ratios; docs/models.md, "Cost of a run", holds the last one. The run's time
# is its CPU time (user + system): a simulation runs on one core, so that is its wall time on an
# idle machine, and it stays so when other jobs share the machine (wall time is printed too).
# Usage: tests/bench/cost_estimate_bench.sh [BUILD_DIR] [SCENARIO...]
set -euo pipefail
build=${1:-build}
shift || true
root=$(cd "$(dirname "$0")/../.." && pwd)
granary="$root/$build/cli/granary"
[ -x "$granary" ] || { echo "build granary first ($granary)" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (package time)" >&2; exit 1; }
# The most the flags allow: a week, 90% of the memory (the bench measures, it does not guard).
mem_gib=$(awk '/MemTotal/ {printf "%.1f", $2 * 0.89 / 1048576}' /proc/meminfo)
limits=(--max-wall-s 604800 --max-memory-gib "$mem_gib")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ $# -gt 0 ]; then files=("$@"); else
  mapfile -t files < <(cd "$root" && find scenarios -name '*.json' | sort)
fi
echo "| scenario | requests (est.) | requests (run) | time s (est.) | CPU s (run) | ratio | wall s (run) | peak MiB (est.) | peak MiB (run) | ratio |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for f in "${files[@]}"; do
  path="$f"; [ -e "$path" ] || path="$root/$f"
  "$granary" validate --json "${limits[@]}" "$path" > "$work/est.json" 2> "$work/err" ||
    { echo "| $f | refused: $(cat "$work/err") |"; continue; }
  set +e
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$granary" run "$path" --quiet "${limits[@]}" \
    --out "$work/r.json" > /dev/null 2> "$work/err"
  rc=$?
  set -e
  if [ $rc -gt 1 ]; then echo "| $f | run failed (exit $rc): $(tail -n 1 "$work/err") |"; continue; fi
  read -r wall user sys rss < "$work/time"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}')
  python3 - "$f" "$wall" "$cpu" "$rss" "$work/est.json" "$work/r.json" <<'PY'
import json, sys
name, wall, cpu, rss, est_path, rep_path = sys.argv[1:7]
wall, cpu, rss = float(wall), float(cpu), int(rss) / 1024.0
e = json.load(open(est_path))["estimate"]
r = json.load(open(rep_path))
req = r.get("fidelity", {}).get("simulated_requests", "-")
ew, em = e["wall_s"], e["memory_bytes"] / 2**20
print("| %s | %.0f | %s | %.1f | %.1f | %.2f | %.1f | %.0f | %.0f | %.2f |" % (
    name, e["requests"], req, ew, cpu, ew / cpu if cpu > 0 else 0, wall, em, rss,
    em / rss if rss else 0))
PY
done
