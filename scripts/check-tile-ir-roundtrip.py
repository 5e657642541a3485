#!/usr/bin/env python3
"""Round trip of the Tile IR of every kernel file in the given directories: `tesserac --emit=tile-ir`
then `tessera-opt` (parse, verify, print) must give identical text.

Usage: check-tile-ir-roundtrip.py TESSERAC TESSERA_OPT [--must-lower] DIR [DIR...]
Prints one line per file: "roundtrip NAME" when its IR round-trips, "no-ir NAME" when tesserac
reports errors or the file has no kernel (allowed unless --must-lower), "FAIL NAME: why"
otherwise, and a summary line. Exits 1 on any FAIL."""
import glob
import os
import subprocess
import sys


def main():
    args = sys.argv[1:]
    tesserac, opt = args[0], args[1]
    must = "--must-lower" in args
    dirs = [a for a in args[2:] if a != "--must-lower"]
    files = sorted(f for d in dirs for f in glob.glob(os.path.join(d, "*.tessera")))
    fails = ok = 0
    for f in files:
        name = os.path.basename(f)
        r = subprocess.run([tesserac, "--emit=tile-ir", f], capture_output=True, text=True)
        if r.returncode != 0 or not r.stdout.strip():
            if must:
                print(f"FAIL {name}: does not lower: {(r.stderr.strip().splitlines() or [''])[0]}")
                fails += 1
            else:
                print(f"no-ir {name}")
            continue
        p = subprocess.run([opt], input=r.stdout, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL {name}: tessera-opt rejects it: {(p.stderr.strip().splitlines() or [''])[0]}")
            fails += 1
        elif p.stdout != r.stdout:
            print(f"FAIL {name}: the printed IR differs after parsing")
            fails += 1
        else:
            print(f"roundtrip {name}")
            ok += 1
    print(f"{ok} round-trip, {fails} failed, {len(files)} files")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
