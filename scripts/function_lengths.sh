#!/bin/bash
# Lists the C++ functions longer than MAX lines (default 150) under the given folders or files,
# longest first, with their file and line (lambdas are counted in the function that holds them).
# Needs Universal Ctags. Exits 1 when there is any, so it can guard a folder:
#   scripts/function_lengths.sh sim
set -euo pipefail
max=${MAX:-150}
files=$(find "$@" -name '*.cc' -o -name '*.h' | sort)
ctags --output-format=json --fields=+ne --kinds-c++=f --language-force=c++ -o - $files |
  python3 -c '
import json, sys
limit = int(sys.argv[1])
rows = []
for line in sys.stdin:
    t = json.loads(line)
    if t.get("_type") != "tag" or "end" not in t:
        continue
    n = t["end"] - t["line"] + 1
    if n > limit:
        scope = t.get("scope", "")
        rows.append((n, t["path"], t["line"], (scope + "::" if scope else "") + t["name"]))
for n, path, line, name in sorted(rows, reverse=True):
    print(f"{n:5d}  {path}:{line}  {name}")
sys.exit(1 if rows else 0)
' "$max"
