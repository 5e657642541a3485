#!/usr/bin/env python3
"""Compiles every .tessera file under the given files and directories twice, with `--check` (the
front end, sema and the host graphs: what the editor shows) and as a user's build does (an object
and a header), and compares the errors the two report. `--check` must predict the
compile: a file the check accepts must compile, and a file it refuses must fail with the same
diagnostics (id, severity, message, range). Prints one line per file that differs (with both
sides' diagnostics) and a summary; exits non-zero when any file differs.

  check-vs-compile.py TESSERAC OUTDIR [--target=cpu] [--gpu=sm_80,...] [-jN] PATH...

Errors are compared as JSON (--diagnostics-format=json). Warnings, remarks and notes are not:
compilation alone runs the optimisations that warn (a loop not pipelined) and remark, and notes
follow their error."""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def diagnostics(stderr):
    out = []
    for line in stderr.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if d.get("severity") != "error":
            continue
        r = d.get("range", {})
        start, end = r.get("start", {}), r.get("end", {})
        out.append((os.path.basename(r.get("file", "")), start.get("line", 0), start.get("column", 0),
                    end.get("line", 0), end.get("column", 0), d.get("severity"), d.get("id"), d.get("message")))
    return sorted(set(out))


def show(ds):
    return "\n".join(f"    {f}:{l}:{c}-{el}:{ec}: {sev}: [{i}] {m}" for f, l, c, el, ec, sev, i, m in ds) or "    (none)"


def compare(tesserac, outdir, flags, path, index):
    stem = os.path.join(outdir, f"{index:04d}")
    check = subprocess.run([tesserac, path, "--check", "--diagnostics-format=json"], capture_output=True, text=True)
    full = subprocess.run([tesserac, path, "--diagnostics-format=json", *flags, "-o", stem + ".o", "-H", stem + ".h"],
                          capture_output=True, text=True)
    for ext in (".o", ".h"):
        if os.path.exists(stem + ext):
            os.remove(stem + ext)
    a, b = diagnostics(check.stderr), diagnostics(full.stderr)
    crashed = [r for r in (check, full) if r.returncode not in (0, 1)]
    if crashed:
        return f"CRASH {path} (exit {crashed[0].returncode})\n{crashed[0].stderr[-2000:]}"
    if (check.returncode == 0) != (full.returncode == 0) or a != b:
        return (f"DIFFERS {path}: --check exit {check.returncode}, compile exit {full.returncode}\n"
                f"  --check:\n{show(a)}\n  compile:\n{show(b)}" +
                ("" if b or full.returncode == 0 else f"\n  compile stderr:\n{full.stderr[-1500:]}"))
    return None


def main():
    tesserac, outdir = sys.argv[1], sys.argv[2]
    flags, paths, jobs = [], [], os.cpu_count() or 2
    for a in sys.argv[3:]:
        if a.startswith("-j"):
            jobs = int(a[2:])
        elif a.startswith("-"):
            flags.append(a)
        else:
            paths.append(a)
    files = []
    for p in paths:
        if os.path.isfile(p):
            files.append(p)
            continue
        for root, _, names in os.walk(p):
            files += [os.path.join(root, n) for n in names if n.endswith(".tessera")]
    files.sort()
    os.makedirs(outdir, exist_ok=True)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda t: compare(tesserac, outdir, flags, t[1], t[0]), enumerate(files)))
    bad = [r for r in results if r]
    for r in bad:
        print(r)
    print(f"{len(files)} files, {len(bad)} where --check and compilation differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
