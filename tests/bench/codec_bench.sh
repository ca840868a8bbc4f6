#!/usr/bin/env bash
# Benchmark: ISA-L Reed-Solomon encode and decode throughput per core (tests/bench/codec_bench.cc)
# for 4+2 and 8+3 at 4 KiB and 64 KiB stripe units. Prints a markdown table in GB/s (1e9 bytes/s
# of CPU time, one thread pinned to one core); docs/models.md ("Writes and erasure coding") holds
# the last one and sim/runner.cc's kEcBytesPerCoreSecond cites it.
# Usage: tests/bench/codec_bench.sh [BUILD_DIR] [extra Google Benchmark flags...]
set -euo pipefail
build=${1:-build}
shift || true
root=$(cd "$(dirname "$0")/../.." && pwd)
bench="$root/$build/tests/codec_bench"
[ -x "$bench" ] || { echo "build codec_bench first ($bench; needs libbenchmark-dev)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
"${pin[@]}" "$bench" --benchmark_format=json --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true "$@" > "$work/out.json"
python3 - "$work/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ctx = d["context"]
print(f"CPU: {ctx.get('num_cpus')} x {ctx.get('mhz_per_cpu')} MHz; ISA-L as installed; "
      f"median of {3} repetitions, CPU time")
print("| benchmark | GB/s (bytes the simulator charges) | stripe data GB/s | time per call |")
print("| --- | --- | --- | --- |")
for b in d["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    name = b["run_name"]
    rate = b.get("bytes_per_second")
    stripe = b.get("stripe_bytes/s")
    unit = b["time_unit"]
    print(f"| {name} | {rate / 1e9:.2f} |" if rate else f"| {name} | - |",
          f"{stripe * 1.0 / 1e9:.2f} |" if stripe else "- |",
          f"{b['cpu_time']:.3g} {unit} |")
PY
