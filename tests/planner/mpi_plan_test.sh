#!/usr/bin/env bash
# MPI: `mpirun -np RANKS granary plan capacity PLAN` splits the simulations over the ranks and
# writes a result byte-identical to a single-process run's (each run with its own run cache, so
# both simulate). Usage: mpi_plan_test.sh GRANARY PLAN RANKS
set -euo pipefail
granary=$1
plan=$2
ranks=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$granary" plan capacity "$plan" --out "$work/single.json" --jobs 1 --quiet >/dev/null
# Containers often forbid the cross-process memory copy Open MPI's shared-memory transport tries
# first (ptrace): plain copies are enough for these messages.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
as_root=()
[ "$(id -u)" -eq 0 ] && as_root=(--allow-run-as-root)
mpirun "${as_root[@]}" --oversubscribe -np "$ranks" \
  "$granary" plan capacity "$plan" --out "$work/mpi.json" --jobs 1 --quiet >"$work/mpi.out"
grep -q '"choice": {' "$work/single.json" || { echo "the single-process run chose no design" >&2; exit 1; }
# Every rank simulated: the MPI run's cache holds what the single run's does.
[ "$(wc -l <"$work/mpi.json.runs.jsonl")" -eq "$(wc -l <"$work/single.json.runs.jsonl")" ] || {
  echo "the runs differ: $(wc -l <"$work/single.json.runs.jsonl") single, $(wc -l <"$work/mpi.json.runs.jsonl") under MPI" >&2
  exit 1
}
cmp "$work/single.json" "$work/mpi.json"
echo "mpirun -np $ranks: result identical to the single-process run ($(wc -l <"$work/mpi.json.runs.jsonl") simulations)"
