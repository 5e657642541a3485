#!/usr/bin/env bash
# Compiles every example with the build's tesserac. Until code generation exists (issues 5
# and 6) this runs the front end on each example; it fails if any example stops compiling.
set -euo pipefail
build="${1:-build}"
tesserac="$build/bin/tesserac"
status=0
for f in examples/*.tessera; do
  [ -e "$f" ] || continue
  if "$tesserac" --parse-only "$f"; then
    echo "example $f: front end OK"
  else
    echo "example $f: FAILED"; status=1
  fi
done
exit $status
