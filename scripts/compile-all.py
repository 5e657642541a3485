#!/usr/bin/env python3
"""Compiles every .tessera file of the given directories into an object with GPU code for the
given architectures (and CPU code), as a user's build would: `tesserac f --gpu=ARCHS -o f.o -H f.h`.
Files that do not lower (host code, fragments, blocks that sema rejects: `--emit=tile-ir` fails)
are listed as `no-kernel`; with --must-compile every file must compile. Prints one line per file
and a summary; exits non-zero if a file that lowers fails to compile.
  compile-all.py TESSERAC OUTDIR --gpu=sm_80,sm_90a [--must-compile] DIR..."""
import os
import subprocess
import sys


def main():
    tesserac, outdir, gpu = sys.argv[1], sys.argv[2], sys.argv[3]
    rest = sys.argv[4:]
    must = "--must-compile" in rest
    dirs = [d for d in rest if d != "--must-compile"]
    os.makedirs(outdir, exist_ok=True)
    compiled = failed = skipped = 0
    for d in dirs:
        for name in sorted(os.listdir(d)):
            if not name.endswith(".tessera"):
                continue
            path = os.path.join(d, name)
            stem = os.path.join(outdir, name[: -len(".tessera")])
            ir = subprocess.run([tesserac, path, "--emit=tile-ir"], capture_output=True, text=True)
            lowers = ir.returncode == 0 and "attributes {kernel" in ir.stdout
            if not lowers and not must:
                print(f"no-kernel {name}")
                skipped += 1
                continue
            r = subprocess.run([tesserac, path, gpu, "-o", stem + ".o", "-H", stem + ".h"],
                               capture_output=True, text=True)
            ok = r.returncode == 0 and os.path.getsize(stem + ".o") > 0 and os.path.getsize(stem + ".h") > 0
            if ok:
                print(f"compiled {name}")
                compiled += 1
            else:
                print(f"FAIL {name}\n{r.stderr}")
                failed += 1
    print(f"{compiled} compiled, {failed} failed, {skipped} without kernels")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
