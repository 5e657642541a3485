#!/bin/sh
# `import tessera` from the install tree: installs the build into a fresh prefix, then imports the
# package from there (with nothing of the build tree on the path), compiles a module with the
# installed compiler and standard library, and runs it on the CPU executor.
#   install_test.sh <build dir> <python> <source dir>
set -eu
build=$1 py=$2 src=$3
prefix=$build/python-install-test
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" > "$build/python-install-test.log"
site=$(echo "$prefix"/lib/python3*/site-packages)
cd /
env -u PYTHONPATH PYTHONPATH="$site" TESSERA_DEVICE=cpu TESSERA_CACHE_DIR="$prefix/cache" "$py" - "$src" <<'PY'
import sys
import numpy as np
import tessera
assert tessera.__file__.startswith(sys.path[0]) or "site-packages" in tessera.__file__, tessera.__file__
from tessera import _paths
m = tessera.compile(sys.argv[1] + "/examples/saxpy.tessera")
x = np.arange(100, dtype=np.float32)
y = np.ones(100, dtype=np.float32)
m.saxpy(x, y, 2.0)
assert np.array_equal(y, 2 * x + 1)
print("install tree ok:", tessera.__file__, _paths.TESSERAC)
PY
