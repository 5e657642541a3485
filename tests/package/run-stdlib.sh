#!/usr/bin/env bash
# The standard library after installation: installs the build into a fresh prefix, builds
# tests/package/stdlib as a separate project against it (a user module that imports stdlib,
# compiled by the installed tesserac with no flags, and a C program linking Tessera::std), and
# runs it on the CPU executor. TESSERA_STDLIB_PATH is unset so the default search path is what
# finds stdlib (share/tessera beside the installed bin/).
set -euo pipefail
build="$1"; src="$2"; work="$3"; target="${4:-all}"
unset TESSERA_STDLIB_PATH
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" > /dev/null
test -f "$work/prefix/share/tessera/stdlib/nn.tessera" || { echo "FAIL: stdlib sources not installed"; exit 1; }
test -f "$work/prefix/include/tessera/std.h" || { echo "FAIL: tessera/std.h not installed"; exit 1; }
# The installed compiler alone (no -I, no --stdlib-dir) resolves the import.
"$work/prefix/bin/tesserac" --check "$src/tests/package/stdlib/noise.tessera"
cmake -S "$src/tests/package/stdlib" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DKERNEL_TARGET="$target" > /dev/null
cmake --build "$work/build" > /dev/null
TESSERA_DEVICE=cpu "$work/build/stdlib_user"
