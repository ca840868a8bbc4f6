#!/usr/bin/env bash
# Benchmark / check: a Monte Carlo of the simulator against the durability model's Markov chain.
# Runs tests/bench/data/durability-mc-8-osds.json (random drive failures, failure clock sped up)
# for seeds 1..N, counts the runs that lost objects, measures the time to detect (failure to
# mark-out) and to recover (single-failure runs) from the reports, feeds them to
# `granary durability` with the same drives, replicas, PGs and AFR (times scaled by the same
# time_scale), and prints the probability of loss within the window from both.
# Usage: tests/bench/durability_sim_mc.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build}
runs=${2:-100}
root=$(cd "$(dirname "$0")/../.." && pwd)
granary="$root/$build/cli/granary"
scenario="$root/tests/bench/data/durability-mc-8-osds.json"
[ -x "$granary" ] || { echo "build granary first ($granary)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

start=$(date +%s.%N)
for seed in $(seq 1 "$runs"); do
  "$granary" run "$scenario" --quiet --seed "$seed" --out "$work/r$seed.json" > /dev/null 2> "$work/err" ||
    { cat "$work/err" >&2; exit 1; }
done
end=$(date +%s.%N)
python3 - "$granary" "$scenario" "$work" "$runs" "$start" "$end" <<'PY'
import json, math, subprocess, sys
granary, scenario, work, runs, start, end = sys.argv[1:7]
runs = int(runs)
s = json.load(open(scenario))
spec = next(f for f in s["failures"] if f["kind"] == "random_drive_failures")
ts, window = spec["time_scale"], spec["to_s"] - spec.get("from_s", 0)
drives = s["cluster"]["storage"]["count"] * s["cluster"]["storage"]["drive"]["count"]
replicas, pgs = s["storage"]["rados"]["replicas"], s["storage"]["rados"]["pg_num"]
lost, failures, detect, recover = 0, 0, [], []
for seed in range(1, runs + 1):
    rec = json.load(open("%s/r%d.json" % (work, seed)))["recovery"]
    lost += rec["objects_lost"] > 0
    n = rec["random_drive_failures"][0]["drives_failed"]
    failures += n
    detect += [e["marked_out_at_s"] - e["at_s"] for e in rec["events"] if e["marked_out_at_s"] is not None]
    if n == 1 and rec["recovery_finished_at_s"] is not None:
        recover.append(rec["recovery_finished_at_s"] - rec["recovery_started_at_s"])
d, r = sum(detect) / len(detect), sum(recover) / len(recover)
out = subprocess.run([granary, "durability", "--drives", str(drives), "--replicas", str(replicas),
                      "--pgs", str(pgs), "--afr", str(spec["afr"]), "--detect-hours", str(d * ts / 3600),
                      "--recovery-hours", str(r * ts / 3600), "--json"], capture_output=True, text=True, check=True)
m = json.loads(out.stdout)
p_markov = 1 - math.exp(-window * ts / 3600 / m["cluster_mttdl_hours"])
p_sim = lost / runs
print("durability Monte Carlo of the simulator: %d runs (%.1f s wall), %.2f drive failures per run; "
      "detect %.2f s, recover %.2f s (means of the runs); loss within the window: simulator %.3f +- %.3f, "
      "Markov %.3f" % (runs, float(end) - float(start), failures / runs, d, r, p_sim,
                       math.sqrt(p_sim * (1 - p_sim) / runs), p_markov))
PY
