#!/usr/bin/env bash
# Benchmark: design points per minute of `granary plan capacity` on this machine, screened (the
# closed-form screen of every point, one process) and simulated (candidates in forked children,
# --jobs at once). The screen runs over the flagship cluster's 816-point space
# (tests/bench/data/planner-flagship-space.json, 1,024 GPUs); simulations over
# plans/two-dgx-a100.json (16 GPUs, two cases), from an empty run cache. A simulation's cost
# grows with the cluster: the flagship scenario's own run is timed too, which bounds how many
# flagship-sized points a minute the machine simulates (jobs x 60 / its wall time). Targets
# (issue 14): >= 1,000 screened and >= 10 simulated points per minute on 2 cores.
# Usage: tests/bench/planner_bench.sh [BUILD_DIR] [JOBS]
set -euo pipefail
build=${1:-build}
jobs=${2:-$(nproc)}
root=$(cd "$(dirname "$0")/../.." && pwd)
granary="$root/$build/cli/granary"
[ -x "$granary" ] || { echo "build granary first" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
now() { date +%s.%N; }
field() { python3 -c "import json,sys; r=json.load(open('$1')); print(eval(sys.argv[1]))" "$2"; }

flagship="$root/tests/bench/data/planner-flagship-space.json"
t0=$(now)
"$granary" plan capacity "$flagship" --screen-only --out "$work/screen.json" --quiet >/dev/null
t1=$(now)
points=$(field "$work/screen.json" "r['counts']['points']")
screen_rate=$(python3 -c "print(f'{$points / ($t1 - $t0) * 60:,.0f}')")

t0=$(now)
"$granary" run "$root/scenarios/read-storm-128-dgx-a100.json" >/dev/null 2>&1
t1=$(now)
flag_s=$(python3 -c "print(f'{$t1 - $t0:.1f}')")
flag_rate=$(python3 -c "print(f'{$jobs * 60 / ($t1 - $t0):.1f}')")

small="$root/plans/two-dgx-a100.json"
t0=$(now)
"$granary" plan capacity "$small" --jobs "$jobs" --out "$work/small.json" --quiet >/dev/null
t1=$(now)
small_sim=$(field "$work/small.json" "r['counts']['simulated']")
small_runs=$(wc -l <"$work/small.json.runs.jsonl")
small_s=$(python3 -c "print(f'{$t1 - $t0:.1f}')")
small_rate=$(python3 -c "print(f'{$small_runs / ($t1 - $t0) * 60:.1f}')")
small_points=$(field "$work/small.json" "r['counts']['points']")

echo "granary plan capacity on $(nproc) cores, --jobs $jobs ($(date -u +%F))"
echo "| plan | points | what | wall s | rate |"
echo "| --- | --- | --- | --- | --- |"
echo "| flagship space (1,024 GPUs) | $points | screen every point | - | $screen_rate points/min |"
echo "| scenarios/read-storm-128-dgx-a100.json (1,024 GPUs) | 1 | one simulation (granary run) | $flag_s | at most $flag_rate simulations/min with $jobs at once |"
echo "| plans/two-dgx-a100.json (16 GPUs, 2 cases) | $small_points | screen, then simulate $small_sim points ($small_runs runs) | $small_s | $small_rate simulations/min |"
