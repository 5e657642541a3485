#!/usr/bin/env bash
# python-device-bundle.sh <3.12 build dir> <tesserac> <bundle dir>
# Packs what the GPU run of the Python package needs (scripts/python-device-run.sh) into one
# directory that travels to a GPU machine (the device tool's carried folder): under /tmp/tsrc, the
# package built for the machine's Python 3.12 (a build directory configured with
# -DTESSERA_PYTHON_EXECUTABLE=<python3.12>), a stripped tesserac with the standard library, the MPI
# libraries libtessera_pyrt.so links (MPI_Init is never called there), the test, example and
# benchmark sources, and a compile cache filled here for exactly those paths and flags, so the GPU
# machine runs no compiler (the cache key holds the source paths, the flags and the compiler's
# version, size and modification time, which the archive keeps).
set -euo pipefail
build=$1 tesserac=$2 out=$3
root=/tmp/tsrc
src=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$root" "$out"
mkdir -p "$root/bin" "$root/share/stdlib" "$root/lib" "$root/src" "$out"
cp -r "$build/python/tessera" "$root/tessera"
rm -f "$root/tessera/_tessera.cpython-311"*
cp "$src"/python/tessera/*.py "$root/tessera/"
cp -r "$src/python/tessera/ops" "$root/tessera/"
cat > "$root/tessera/_paths.py" <<PY
TESSERAC = '$root/bin/tesserac'
STDLIB_DIR = '$root/share'
PY
cp "$tesserac" "$root/bin/tesserac"
strip "$root/bin/tesserac"
touch -d @"$(date +%s)" "$root/bin/tesserac"  # whole seconds: the archive keeps them exactly
cp "$src"/stdlib/*.tessera "$root/share/stdlib/"
for lib in $(ldd "$root/tessera/libtessera_pyrt.so" | awk '/libmpi|libopen-|libhwloc|libevent/ {print $3}'); do
  cp -L "$lib" "$root/lib/"
done
for d in python/tests examples/python examples/dist bench/python tests/conformance; do
  mkdir -p "$root/src/$d"
  cp -r "$src/$d/." "$root/src/$d/"
done
cp "$src/scripts/python-device-run.sh" "$root/"
py312=$(grep -o 'TESSERA_PYTHON_EXECUTABLE:FILEPATH=.*' "$build/CMakeCache.txt" | cut -d= -f2)
LD_LIBRARY_PATH="$root/lib" PYTHONPATH="$root" TESSERA_CACHE_DIR="$root/cache" TESSERA_DEVICE=gpu \
  "$py312" - "$root/src" <<'PY'
import os, sys
import tessera
src = sys.argv[1]
t = src + "/python/tests/kernels/"
for path, kw in [(t + "pykernels.tessera", dict(bounds_check=True)), (t + "spec_setup.tessera", dict(bounds_check=True)),
                 (src + "/examples/dist/tp_gemm.tessera", {}), (src + "/examples/python/transformer_block.tessera", {}),
                 (src + "/bench/python/overhead.tessera", {})]:
    print("compiled", tessera.compile(path, **kw).path)
for op in ("matmul", "softmax", "activations", "rmsnorm"):
    tessera.compile(os.path.dirname(tessera.__file__) + f"/ops/{op}.tessera", module_name=f"tessera_op_{op}")
PY
tar -C /tmp -cJf "$out/tsrc.tar.xz" tsrc
du -sh "$out"
