#!/usr/bin/env bash
# Benchmark: wall time and peak memory of simulating the flagship read storm's epoch, and how
# wall time grows with the number of client nodes (32, 128, 512; storage servers scaled along,
# 8 client nodes per server, as in the flagship). Prints a table; figures go in the closing
# notes and docs/models.md. Usage: tests/bench/sim_scaling.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
granary="$root/$build/cli/granary"
[ -x "$granary" ] || { echo "build granary first ($granary)" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (package time)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

run() {  # name scenario-file
  /usr/bin/time -f "%e %M" -o "$work/time" "$granary" run "$2" --quiet --out "$work/r.json" > /dev/null 2> "$work/err" ||
    { cat "$work/err" >&2; exit 1; }
  read -r wall rss < "$work/time"
  python3 - "$1" "$wall" "$rss" "$work/r.json" <<'PY'
import json, sys
name, wall, rss, path = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
r = json.load(open(path))
f, s = r["fidelity"], r["summary"]
req = f["simulated_requests"]
print("%-30s %7d %6s %9.1f %9.2f %10d %12.0f %8.3f %8.1f" % (
    name, s["accelerators"], "1/%d" % f["slice_factor"], s["simulated_seconds"], wall, req,
    req / wall if wall > 0 else 0, s["accelerator_utilization"]["mean"], rss / 1024))
PY
}

printf "%-30s %7s %6s %9s %9s %10s %12s %8s %8s\n" scenario gpus slice sim_s wall_s requests requests/s AU peak_MiB
run "flagship (128 nodes)" "$root/scenarios/read-storm-128-dgx-a100.json"
for nodes in 32 128 512; do
  servers=$((nodes / 8))
  python3 - "$root/scenarios/read-storm-128-dgx-a100.json" "$nodes" "$servers" "$work/s$nodes.json" <<'PY'
import json, sys
src, nodes, servers, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
d = json.load(open(src))
d["name"] = "storm-%d-nodes" % nodes
d["cluster"]["clients"]["count"] = nodes
d["cluster"]["storage"]["count"] = servers
d["workloads"][0]["files"] = int(750000 * nodes / 128)
d.pop("expect", None)  # the flagship's expectations are about the flagship's cluster
json.dump(d, open(out, "w"))
PY
  run "storm, $nodes nodes / $servers servers" "$work/s$nodes.json"
done
echo "one core; wall_s includes building the world; requests = object reads the simulated clients sent"
