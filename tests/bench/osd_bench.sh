#!/usr/bin/env bash
# Benchmark: real-mode I/O through an OSD (a granary-osd daemon on a drive file, a client
# process over the transport on loopback; tests/bench/osd_bench.cc) against fio (io_uring,
# direct=1) on the same drive file, with the same block size and queue depth and the same
# working set (the image's size): sequential and random reads and writes. Each repeat runs fio
# on the drive file first (no daemon running), then formats it as the OSD's drive, starts the
# daemon, writes the image end to end and runs the same four modes through it. The table shows
# the median of each and Granary's share of fio's throughput (the target is 0.90). The OSD
# acknowledges a write once it is durable (its journal record flushed), so the write modes run
# fio twice: as it comes (no flush, the issue's comparison) and with fsync=1 (a flush after
# every write, the same promise). Files go to
# $BENCH_DIR (default: the temporary folder, which must accept O_DIRECT) and are removed.
# Usage: tests/bench/osd_bench.sh [BUILD_DIR] [IMAGE_MIB] [SECONDS] [REPEATS]
set -euo pipefail
build=${1:-build}
image_mib=${2:-512}
seconds=${3:-5}
repeats=${4:-1}
drive_mib=$((image_mib * 2 + 64))  # the store's copy-on-write needs free blocks
root=$(cd "$(dirname "$0")/../.." && pwd)
bench="$root/$build/tests/osd_bench"
osd="$root/$build/realmode/granary-osd"
[ -x "$bench" ] && [ -x "$osd" ] || { echo "build osd_bench and granary-osd first" >&2; exit 1; }
command -v fio >/dev/null || { echo "fio is missing (scripts/install-deps.sh test)" >&2; exit 1; }
work=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/granary-osd-bench.XXXXXX")
pid=""
cleanup() { [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
drive="$work/osd.0.img"
"$bench" config "$work" "$drive" "$drive_mib"
modes=("write 1024 8" "read 1024 8" "randread 4 32" "randwrite 4 32")
fio_json='import json,sys; j=json.load(sys.stdin)["jobs"][0]; d=j["read"] if j["read"]["bw_bytes"] else j["write"]; print("%.1f" % (d["bw_bytes"] / 1e6))'
declare -A fsync_runs
declare -A fio_runs ours_runs
for _ in $(seq "$repeats"); do
  rm -f "$drive"
  fio --name=fill --filename="$drive" --size="${drive_mib}M" --rw=write --bs=1M --direct=1 \
    --ioengine=io_uring --iodepth=8 --output-format=terse >/dev/null
  for spec in "${modes[@]}"; do
    read -r mode bs_kib qd <<<"$spec"
    fio_runs[$mode]+=" $(fio --name=b --filename="$drive" --size="${image_mib}M" --rw="$mode" \
      --bs="${bs_kib}k" --direct=1 --ioengine=io_uring --iodepth="$qd" --runtime="$seconds" \
      --time_based --output-format=json | python3 -c "$fio_json")"
    case $mode in *write)
      fsync_runs[$mode]+=" $(fio --name=b --filename="$drive" --size="${image_mib}M" --rw="$mode" \
        --bs="${bs_kib}k" --direct=1 --ioengine=io_uring --iodepth="$qd" --fsync=1 \
        --runtime="$seconds" --time_based --output-format=json | python3 -c "$fio_json")" ;;
    esac
  done
  "$osd" --config "$work/cluster.json" --osd 0 --mkfs --workers 64 2>"$work/osd.log" &
  pid=$!
  for _ in $(seq 100); do grep -q "serving at" "$work/osd.log" && break; sleep 0.1; done
  "$bench" fill "$work/cluster.json" "$image_mib" >/dev/null
  for spec in "${modes[@]}"; do
    read -r mode bs_kib qd <<<"$spec"
    ours_runs[$mode]+=" $("$bench" run "$work/cluster.json" "$mode" "$bs_kib" "$qd" "$seconds" \
      "$image_mib" | awk '{print $4}')"
  done
  kill "$pid"
  wait "$pid" || true
  pid=""
done
echo "image: $image_mib MiB on a $drive_mib MiB drive file on $(df -T "$work" | awk 'NR==2 {print $2}')," \
  "${seconds} s per run, median of $repeats, fio $(fio --version), one OSD, 1 copy, loopback"
echo "| mode | block | queue depth | fio MB/s (median) | through the OSD MB/s (median) | OSD / fio | fio fsync=1 MB/s | OSD / fio fsync=1 |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
for spec in "${modes[@]}"; do
  read -r mode bs_kib qd <<<"$spec"
  f=$(median <<<"${fio_runs[$mode]}")
  o=$(median <<<"${ours_runs[$mode]}")
  if [ -n "${fsync_runs[$mode]:-}" ]; then
    fs=$(median <<<"${fsync_runs[$mode]}")
    extra="$fs | $(python3 -c "print(f'{$o / $fs:.2f}')")"
  else
    extra="- | -"
  fi
  echo "| $mode | ${bs_kib} KiB | $qd | $f | $o | $(python3 -c "print(f'{$o / $f:.2f}')") | $extra |"
done
