#!/usr/bin/env bash
# Validation of `granary real calibrate` (realmode/calibration.h): brings up a real-mode
# cluster (3 storage servers with one OSD each, 3 replicas, a monitor, one client node; loopback,
# or network namespaces as root with NAMESPACES=1), calibrates the simulator on it, then runs
# block workloads the calibration was not fitted to (other block sizes, queue depths and
# mixes) for real and in the simulator, with the calibrated scenario and with the catalog's
# figures, and prints each one's IOPS and p50 latency and the simulator's IOPS over the real
# one. Removes the cluster at the end.
# Usage: tests/bench/calibration_check.sh [BUILD_DIR] [PROBE_SECONDS] [RUN_SECONDS]
set -euo pipefail
build=${1:-build}
probe_s=${2:-2}
run_s=${3:-2}
root=$(cd "$(dirname "$0")/../.." && pwd)
granary="$root/$build/cli/granary"
[ -x "$granary" ] || { echo "build granary first" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/granary-calibration.XXXXXX")
hosts=loopback
[ "${NAMESPACES:-0}" = 1 ] && hosts=namespaces
scenario="$work/cluster.json"
cat >"$scenario" <<EOF
{"granary": 1, "name": "calibration-check", "seed": 11,
  "cluster": {
    "clients": {"count": 1, "accelerator": "a100", "accelerators_per_node": 2,
                "nic": {"profile": "connectx6-200g"}},
    "storage": {"count": 3, "drive": {"profile": "samsung-pm9a3-7.68tb", "count": 1},
                "nic": {"profile": "connectx4lx-25g"}}},
  "storage": {"design": "rados", "protocol": "tcp",
              "rados": {"pg_num": 32, "replicas": 3, "object_size_mib": 1}},
  "workloads": [{"name": "check", "type": "block", "volume": {"size_gib": 0.03125},
                 "nodes": 1, "block_size_kib": 4, "queue_depth": 1, "read_fraction": 1,
                 "duration_s": $run_s, "ramp_s": 0.4}],
  "real": {"hosts": "$hosts", "drive_mib": 256, "dir": "$work/cluster"}}
EOF
cleanup() { "$granary" real down "$scenario" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
"$granary" real up "$scenario" 2>/dev/null
"$granary" real calibrate "$scenario" --probe-seconds "$probe_s" --report "$work/calibration.json" \
  --scenario-out "$work/calibrated.json" 2>/dev/null
python3 - "$work/calibration.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
m = c["machine"]
print(f"machine: {m['hostname']}, {m['cpus']} CPUs, {m['kernel']}; hosts: {c['real']['hosts']}")
print("drive:", {k: v for k, v in c["drive"].items() if k not in ("profile", "count")})
print("protocol:", {k: v for k, v in c["protocol"].items()})
for k, f in c["latency_fit"].items():
    print(f"fit {k} ({f['probe']}): real p50 {f['real_p50_ms']:.3f} ms, simulated "
          f"{f['sim_p50_ms_without']:.3f} ms before, {f['sim_p50_ms']:.3f} ms after ({f['fits']})")
EOF
echo "| workload | real IOPS | real p50 ms | calibrated sim IOPS | p50 ms | sim / real | catalog sim IOPS | sim / real |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for spec in "4 1 1" "64 1 1" "256 1 1" "1024 1 1" "64 1 0" "16 2 1" "64 4 1" "4 16 1" "4 4 0.7"; do
  read -r bk qd rf <<<"$spec"
  for f in "$scenario" "$work/calibrated.json"; do
    python3 - "$f" "$bk" "$qd" "$rf" <<'EOF'
import json, sys
path, bk, qd, rf = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
j = json.load(open(path))
w = j["workloads"][0]
w["block_size_kib"], w["queue_depth"], w["read_fraction"] = bk, qd, rf
json.dump(j, open(path, "w"), indent=1)
EOF
  done
  "$granary" real run "$scenario" --report "$work/real.json" 2>/dev/null
  "$granary" run "$work/calibrated.json" --out "$work/sim.json" --quiet >/dev/null 2>&1
  "$granary" run "$scenario" --out "$work/catalog.json" --quiet >/dev/null 2>&1
  python3 - "$work" "$bk" "$qd" "$rf" <<'EOF'
import json, sys
d, bk, qd, rf = sys.argv[1:]
r, s, c = (json.load(open(f"{d}/{n}.json")) for n in ("real", "sim", "catalog"))
op = "read" if float(rf) > 0 else "write"
iops = lambda j: j["summary"]["iops"]
p50 = lambda j: j["latency_ms"][op]["p50"]
mix = {"1": "reads", "0": "writes"}.get(rf, f"{float(rf):.0%} reads")
print(f"| {bk} KiB {mix}, QD {qd} | {iops(r):.0f} | {p50(r):.3f} | {iops(s):.0f} | {p50(s):.3f} "
      f"| {iops(s) / iops(r):.2f} | {iops(c):.0f} | {iops(c) / iops(r):.2f} |")
EOF
done
