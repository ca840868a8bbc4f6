#!/usr/bin/env bash
# Runs every libFuzzer target of fuzz/ (one per fuzz/*_fuzzer.cc) for SECONDS each, from its seed
# corpus (fuzz/NAME.seeds) with its dictionary (fuzz/NAME.dict) when it has one. Fails (exit 1)
# when any target finds a crash, a sanitizer report, a leak, an input slower than -timeout or
# memory over -rss_limit_mb; the input is saved under BUILD/fuzz-artifacts/NAME/.
# Usage: fuzz/run.sh BUILD_DIR SECONDS [extra libFuzzer flags...]      (`make fuzz` runs it)
# Environment: FUZZ_TIMEOUT_S (per input, default 10), FUZZ_RSS_LIMIT_MB (default 2048).
set -euo pipefail
shopt -s nullglob globstar

build=${1:?usage: fuzz/run.sh BUILD_DIR SECONDS [libFuzzer flags...]}
seconds=${2:?usage: fuzz/run.sh BUILD_DIR SECONDS [libFuzzer flags...]}
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
failed=()
for source in "$root"/fuzz/*_fuzzer.cc; do
  name=$(basename "$source" .cc)
  binary="$build/fuzz/$name"
  [ -x "$binary" ] || { echo "fuzz/run.sh: $binary is not built" >&2; exit 2; }
  seeds="$build/fuzz-seeds/$name" corpus="$build/fuzz-corpus/$name"
  artifacts="$build/fuzz-artifacts/$name" log="$build/fuzz-logs/$name.log"
  rm -rf "$seeds"
  mkdir -p "$seeds" "$corpus" "$artifacts" "$(dirname "$log")"
  # Seeds: the files the globs of fuzz/NAME.seeds match, named by their path.
  if [ -f "$root/fuzz/$name.seeds" ]; then
    while read -r pattern; do
      case "$pattern" in '' | '#'*) continue ;; esac
      for f in "$root"/$pattern; do
        [ -f "$f" ] && cp "$f" "$seeds/$(echo "${f#"$root"/}" | tr / _)"
      done
    done <"$root/fuzz/$name.seeds"
  fi
  flags=(-max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT_S:-10}"
    -rss_limit_mb="${FUZZ_RSS_LIMIT_MB:-2048}" -print_final_stats=1
    -artifact_prefix="$artifacts/")
  [ -f "$root/fuzz/$name.dict" ] && flags+=(-dict="$root/fuzz/$name.dict")
  echo "fuzz/run.sh: $name for ${seconds}s ($(ls "$seeds" | wc -l) seeds, corpus $corpus)" >&2
  if "$binary" "${flags[@]}" "$@" "$corpus" "$seeds" >"$log" 2>&1; then
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)|^#[0-9]+.*DONE' \
      "$log" | sed "s/^/  $name: /" >&2 || true
  else
    failed+=("$name")
    echo "fuzz/run.sh: $name FAILED; log $log, inputs:" >&2
    ls "$artifacts" >&2
    grep -E -A40 '^==[0-9]+==ERROR|runtime error|^==[0-9]+== ERROR|deadly signal|Timeout|out-of-memory' \
      "$log" | head -60 >&2 || true
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz/run.sh: failed: ${failed[*]}" >&2; exit 1; }
