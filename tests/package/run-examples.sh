#!/usr/bin/env bash
# Installs the build into a fresh prefix, builds examples/ as a separate project against it
# (find_package(Tessera), tessera_add_library), and runs every example program on the CPU
# executor (each checks its results against a CPU reference).
set -euo pipefail
build="$1"; src="$2"; work="$3"; target="${4:-all}"
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" > /dev/null
cmake -S "$src/examples" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DTESSERA_EXAMPLE_TARGET="$target" -DTESSERA_EXAMPLE_HOSTS="$src/tests/exec" > /dev/null
cmake --build "$work/build" > /dev/null
status=0
for k in "$src"/examples/*.tessera; do
  name=$(basename "$k" .tessera)
  if out=$(TESSERA_DEVICE=cpu "$work/build/$name" 2>&1); then
    echo "$name: $(echo "$out" | tail -1)"
  else
    echo "$out" | tail -20; echo "$name: FAILED"; status=1
  fi
done
for k in "$src"/examples/dist/*.tessera; do
  name=dist_$(basename "$k" .tessera)
  if out=$(TESSERA_DEVICE=cpu "$work/build/$name" 2>&1); then
    echo "$name: $(echo "$out" | tail -1)"
  else
    echo "$out" | tail -20; echo "$name: FAILED"; status=1
  fi
done
exit $status
