#!/usr/bin/env bash
# The dependency-file test: builds tests/package/depfile (whose kernel module imports
# consts.tessera) against a fresh install, then changes the imported module and checks that the
# build recompiles the kernel and the program sees the new value; a second build with no change
# must do nothing. Runs on the CPU executor.
set -euo pipefail
build="$1"; src="$2"; work="$3"; target="${4:-all}"
rm -rf "$work"
mkdir -p "$work/src"
cmake --install "$build" --prefix "$work/prefix" > /dev/null
cp "$src/tests/package/depfile/CMakeLists.txt" "$src/tests/package/depfile/scaled.tessera" \
   "$src/tests/package/depfile/main.cpp" "$work/src/"
set_factor() { sed "s/@FACTOR@/$1/" "$src/tests/package/depfile/consts.tessera.in" > "$work/src/consts.tessera"; }
expect() {  # expect <factor>: the program prints it
  local out; out=$(TESSERA_DEVICE=cpu "$work/build/scaled")
  if [ "$out" != "factor $1" ]; then echo "FAIL: expected 'factor $1', the program printed '$out'"; exit 1; fi
  echo "$out"
}
set_factor 3
cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" -DKERNEL_TARGET="$target" > /dev/null
cmake --build "$work/build" > /dev/null
expect 3
grep -q "consts.tessera" "$work/build/scaled_kernels.tessera/scaled.d" ||
  { echo "FAIL: scaled.d does not name consts.tessera:"; cat "$work/build/scaled_kernels.tessera/scaled.d"; exit 1; }
# Ninja compares modification times; make sure the edit is newer than the object.
sleep 1
set_factor 5
log=$(cmake --build "$work/build" -- -v)
echo "$log" | grep -q "tesserac.*scaled.tessera" ||
  { echo "FAIL: changing the imported module did not recompile scaled.tessera:"; echo "$log"; exit 1; }
echo "rebuilt after consts.tessera changed"
expect 5
log=$(cmake --build "$work/build" -- -v)
if echo "$log" | grep -q "tesserac"; then echo "FAIL: a build without changes ran tesserac again:"; echo "$log"; exit 1; fi
echo "no work when nothing changed"
