#!/usr/bin/env bash
# A short run of every fuzz target, seeded with the conformance and lit test inputs. The long
# runs (10 minutes each) are reported in the issues; CI runs this smoke run.
set -euo pipefail
build="${1:-build-fuzz}"
secs="${FUZZ_SECONDS:-30}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for target in "$build"/bin/*_fuzz; do
  [ -x "$target" ] || continue
  name=$(basename "$target")
  corpus="$work/$name"
  mkdir -p "$corpus"
  case "$name" in
    ir_fuzz) find tests/lit/ir -name '*.tir' -exec cp {} "$corpus/" \; 2>/dev/null || true ;;
    graph_fuzz) find tests/lit/graph -name '*.tgraph' -exec cp {} "$corpus/" \; 2>/dev/null || true ;;
    exec_fuzz) ;;  # its input is a stream of generator choices: it starts from nothing
    store_fuzz) ;;  # a script of connection steps (the rendezvous protocol): from nothing too
    *) cp tests/conformance/*.tessera examples/*.tessera "$corpus/"
       find tests/lit -name '*.tessera' -exec cp {} "$corpus/" \; ;;
  esac
  echo "fuzz-smoke: $name for ${secs}s on $(ls "$corpus" | wc -l) seeds"
  if ! "$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$work/" \
       -print_final_stats=1 "$corpus" > "$work/$name.log" 2>&1; then
    echo "fuzz-smoke: $name FAILED"; tail -50 "$work/$name.log"; status=1
  else
    grep -E "stat::number_of_executed_units" "$work/$name.log" || true
  fi
done
exit $status
