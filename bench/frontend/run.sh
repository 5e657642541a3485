#!/usr/bin/env bash
# Front-end speed: scans and parses a generated 100,000-line file (target: under one second on
# the 2-core development machine). Prints the best of 5 wall-clock runs.
set -euo pipefail
build="${1:-build}"
lines="${LINES:-100000}"
src=$(mktemp --suffix=.tessera)
trap 'rm -f "$src"' EXIT
python3 "$(dirname "$0")/gen_large_source.py" "$lines" > "$src"
echo "input: $(wc -l < "$src") lines, $(wc -c < "$src") bytes"
"$build/bin/tesserac" --parse-only "$src"  # must succeed before it is timed
python3 - "$build/bin/tesserac" "$src" "$lines" <<'PY'
import subprocess, sys, time
best = min((lambda t0: (subprocess.run([sys.argv[1], "--parse-only", sys.argv[2]], check=True),
                        time.perf_counter() - t0)[1])(time.perf_counter()) for _ in range(5))
print(f"scan+parse {sys.argv[3]} lines: best of 5 = {best:.3f} s")
PY
