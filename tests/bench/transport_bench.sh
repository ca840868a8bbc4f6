#!/usr/bin/env bash
# Benchmark: real mode's transport (realmode/transport.h) against libfabric's own fi_pingpong
# (libfabric-bin) on the same provider and link (tcp;ofi_rxm on loopback), side by side: half a
# round trip and throughput per message size. fi_pingpong moves raw buffers (sends of any size,
# rxm's rendezvous above its eager limit); Granary moves framed, checksummed, authenticated
# engine messages, inline up to 72 KiB and by RMA read above. Each size runs REPEATS times,
# the two in turn; the table shows medians.
# Usage: tests/bench/transport_bench.sh [BUILD_DIR] [REPEATS]
set -euo pipefail
build=${1:-build}
repeats=${2:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
bench="$root/$build/tests/transport_bench"
[ -x "$bench" ] || { echo "build transport_bench first ($bench)" >&2; exit 1; }
command -v fi_pingpong >/dev/null || { echo "fi_pingpong is missing (libfabric-bin)" >&2; exit 1; }
provider="tcp;ofi_rxm"
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
# One fi_pingpong run over every size (-S all, ITERS iterations each, as fi_pingpong is usually
# run: one run of a single size measured 3-4x slower small messages here), into $1.
pingpong_all() {
  local out=$1 port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  timeout 300 fi_pingpong -p "$provider" -e rdm -I 1000 -S all -B "$port" >/dev/null 2>&1 &
  local server=$!
  sleep 0.3
  timeout 300 fi_pingpong -p "$provider" -e rdm -I 1000 -S all -P "$port" 127.0.0.1 >"$out" 2>/dev/null
  wait "$server" || true
}
# "usec/xfer MB/s" of fi_pingpong's row for SIZE bytes (its labels: 64, 4k, 64k, 1m, 4m).
pingpong_row() {
  local label
  label=$(python3 -c "n=$2; print(n >> 20 and f'{n >> 20}m' or n >> 10 and f'{n >> 10}k' or n)")
  awk -v l="$label" '$1 == l && NF >= 8 {print $7, $6}' "$1"
}
echo "provider $provider on loopback, $(fi_info --version | head -1), median of $repeats"
echo "| message | fi_pingpong µs/xfer | Granary µs/xfer | fi_pingpong MB/s | Granary MB/s | Granary / fi_pingpong (MB/s) |"
echo "| --- | --- | --- | --- | --- | --- |"
sizes="64 4096 65536 1048576 4194304"
declare -A pp_us pp_mb our_us our_mb
for _ in $(seq "$repeats"); do
  pp=$(mktemp)
  pingpong_all "$pp"
  for size in $sizes; do
    read -r us mb <<<"$(pingpong_row "$pp" "$size")"
    pp_us[$size]+=" $us" pp_mb[$size]+=" $mb"
    iters=$((size >= 1048576 ? 200 : 1000))
    read -r _ _ us mb <<<"$("$bench" "$size" "$iters" "$provider")"
    our_us[$size]+=" $us" our_mb[$size]+=" $mb"
  done
  rm -f "$pp"
done
for size in $sizes; do
  a=$(median <<<"${pp_us[$size]}") b=$(median <<<"${our_us[$size]}")
  c=$(median <<<"${pp_mb[$size]}") d=$(median <<<"${our_mb[$size]}")
  ratio=$(python3 -c "print(f'{$d / $c:.2f}')")
  echo "| $size B | $a | $b | $c | $d | $ratio |"
done
