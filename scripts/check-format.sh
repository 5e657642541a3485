#!/usr/bin/env bash
# Checks C++ files against .clang-format with clang-format 19 (the version of the LLVM the
# build uses; other versions format some constructs differently). With no arguments it checks
# the folders that are kept formatted (FORMATTED below); with paths, those files or folders.
# Prints the files that differ and exits 1 if any does; `--fix` rewrites them instead.
#   check-format.sh [--fix] [PATH...]
set -euo pipefail
cd "$(dirname "$0")/.."
FORMATTED=(basic frontend sema graph irgen ir codegen hostgen runtime lsp tools bench stdlib tests examples python)
fix=0
if [ "${1:-}" = "--fix" ]; then fix=1; shift; fi
paths=("$@")
[ ${#paths[@]} -gt 0 ] || paths=("${FORMATTED[@]}")
cf=$(command -v clang-format-19 || true)
if [ -z "$cf" ]; then
  echo "check-format: clang-format-19 not found (make deps installs it)" >&2
  exit 2
fi
mapfile -t files < <(find "${paths[@]}" -type f \( -name '*.cpp' -o -name '*.h' \) | sort)
bad=0
for f in "${files[@]}"; do
  if [ $fix = 1 ]; then
    "$cf" -i "$f"
  elif ! "$cf" --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f"
    bad=$((bad + 1))
  fi
done
[ $fix = 1 ] && exit 0
echo "${#files[@]} files checked, $bad not formatted"
[ $bad = 0 ]
