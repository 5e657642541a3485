#!/usr/bin/env bash
# Compiles and runs the examples. Every examples/*.tessera goes through the front end and
# semantic analysis; the example programs (the spec's kernels with host programs that check
# every element against a CPU reference, built as build/bin/*_test) then run on the GPU when
# the machine has one and on the CPU executor otherwise. Exits non-zero on any failure.
set -euo pipefail
build="${1:-build}"
tesserac="$build/bin/tesserac"
status=0
for f in examples/*.tessera examples/dist/*.tessera; do
  if "$tesserac" --check "$f"; then
    echo "example $f: checked"
  else
    echo "example $f: FAILED to check"; status=1
  fi
done
ran=0
for prog in "$build"/bin/*_test; do
  case "$(basename "$prog")" in
    *_unittests) continue ;;
  esac
  [ -x "$prog" ] || continue
  ran=$((ran + 1))
  if out=$("$prog" 2>&1); then
    echo "example $(basename "$prog" _test): $(echo "$out" | grep -E '^device:' | head -1) PASS"
  else
    echo "$out" | tail -20
    echo "example $(basename "$prog" _test): FAILED"; status=1
  fi
done
[ "$ran" -gt 0 ] || { echo "no example programs were built"; status=1; }
exit $status
