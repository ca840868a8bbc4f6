#!/usr/bin/env bash
# Benchmark: real mode's drive path (realmode/uring_device.h, io_uring with O_DIRECT) against fio
# (ioengine=io_uring, direct=1) on the same file, block size and queue depth, side by side:
# sequential and random reads and writes. Each pair runs REPEATS times, the two tools in turn
# (a shared host's disk swings between runs), and the table shows the median of each and
# Granary's share of fio's throughput. The file is created in $BENCH_DIR (default: the
# temporary folder, which must accept O_DIRECT) and removed afterwards.
# Usage: tests/bench/uring_device_bench.sh [BUILD_DIR] [SIZE_MIB] [SECONDS] [REPEATS]
set -euo pipefail
build=${1:-build}
size_mib=${2:-1024}
seconds=${3:-5}
repeats=${4:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
bench="$root/$build/tests/uring_device_bench"
[ -x "$bench" ] || { echo "build uring_device_bench first ($bench)" >&2; exit 1; }
command -v fio >/dev/null || { echo "fio is missing (scripts/install-deps.sh test)" >&2; exit 1; }
work=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/granary-uring-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
file="$work/drive"
# Written once end to end, so that reads and both tools see allocated, written blocks.
fio --name=fill --filename="$file" --size="${size_mib}M" --rw=write --bs=1M --direct=1 \
  --ioengine=io_uring --iodepth=8 --output-format=terse >/dev/null
echo "file: $size_mib MiB on $(df -T "$work" | awk 'NR==2 {print $2}'), ${seconds} s per run," \
  "median of $repeats, fio $(fio --version)"
echo "| mode | block | queue depth | fio MB/s (median) | Granary MB/s (median) | Granary / fio |"
echo "| --- | --- | --- | --- | --- | --- |"
median() { tr ' ' '\n' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
for spec in "read 1024 8" "write 1024 8" "randread 4 32" "randwrite 4 32"; do
  read -r mode bs_kib qd <<<"$spec"
  fio_runs="" ours_runs=""
  for _ in $(seq "$repeats"); do
    fio_runs+=" $(fio --name=b --filename="$file" --size="${size_mib}M" --rw="$mode" \
      --bs="${bs_kib}k" --direct=1 --ioengine=io_uring --iodepth="$qd" --runtime="$seconds" \
      --time_based --output-format=json |
      python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; d=j["read"] if j["read"]["bw_bytes"] else j["write"]; print("%.1f" % (d["bw_bytes"] / 1e6))')"
    ours_runs+=" $("$bench" "$file" "$size_mib" "$bs_kib" "$qd" "$mode" "$seconds" | awk '{print $4}')"
  done
  fio_mbps=$(median <<<"$fio_runs")
  ours_mbps=$(median <<<"$ours_runs")
  ratio=$(python3 -c "print(f'{$ours_mbps / $fio_mbps:.2f}')")
  echo "| $mode | ${bs_kib} KiB | $qd | $fio_mbps | $ours_mbps | $ratio |"
done
