#!/usr/bin/env bash
# Installs the build into a fresh prefix, configures and builds tests/package as a separate
# project against it (find_package(Tessera)), and runs the program on the CPU executor.
set -euo pipefail
build="$1"; src="$2"; work="$3"; target="${4:-all}"
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" > /dev/null
cmake -S "$src/tests/package" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DKERNEL_SOURCE="$src/examples/saxpy.tessera" -DKERNEL_TARGET="$target" \
  -DEXEC_TEST_SOURCE="$src/tests/exec/saxpy_test.cpp" -DEXEC_TEST_DIR="$src/tests/exec" > /dev/null
cmake --build "$work/build" > /dev/null
TESSERA_DEVICE=cpu "$work/build/saxpy_consumer"
