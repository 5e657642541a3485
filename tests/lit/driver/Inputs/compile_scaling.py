#!/usr/bin/env python3
"""Compile time against input size (issue 11): compiles generated modules of n and 4n units
(statements in one body, kernels, parameters) for the CPU executor and checks that the CPU time
grows no faster than `max_ratio` times for 4x the units (linear: about 4; a quadratic stage
makes it approach 16), and, when given, that the larger module takes at most `max_seconds`.
Times are the compiler's user + system CPU time, so other load on the machine matters little;
each size is compiled twice and the faster run counts.

usage: compile_scaling.py <tesserac> <workdir> <kind> <n> <max_ratio> [<max_seconds>]"""
import os
import resource
import subprocess
import sys


def source(kind, n):
    if kind == "statements":
        lines = ["@kernel", "def big(x: f32[n], y: mut f32[n]):", "    i = tile.linear_id()", "    if i < n:",
                 "        a = x[i]"]
        for k in range(n):
            lines.append(f"        b{k} = a * {k % 97}.5 + x[i]")
            lines.append(f"        y[i] = b{k}")
        return "\n".join(lines) + "\n"
    if kind == "kernels":
        out = []
        for k in range(n):
            out += ["@kernel", f"def k{k}(x: f32[n], y: mut f32[n]):", "    i = tile.linear_id()", "    if i < n:",
                    f"        y[i] = x[i] * {k}.0", ""]
        return "\n".join(out)
    if kind == "parameters":
        params = ", ".join(f"a{k}: f32" for k in range(n))
        body = " + ".join(f"a{k}" for k in range(0, n, max(1, n // 50)))
        return (f"@kernel\ndef many(y: mut f32[n], {params}):\n    i = tile.linear_id()\n    if i < n:\n"
                f"        y[i] = {body}\n")
    raise SystemExit(f"unknown kind {kind}")


def cpu_seconds(tesserac, path, out):
    best = None
    for _ in range(2):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([tesserac, "--target=cpu", path, "-o", out], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = t if best is None else min(best, t)
    return best


def main():
    tesserac, workdir, kind, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    max_ratio = float(sys.argv[5])
    max_seconds = float(sys.argv[6]) if len(sys.argv) > 6 else None
    os.makedirs(workdir, exist_ok=True)
    times = []
    for size in (n, 4 * n):
        path = os.path.join(workdir, f"{kind}{size}.tessera")
        with open(path, "w") as f:
            f.write(source(kind, size))
        times.append(cpu_seconds(tesserac, path, os.path.join(workdir, f"{kind}{size}.o")))
    ratio = times[1] / max(times[0], 0.05)
    ok = ratio <= max_ratio and (max_seconds is None or times[1] <= max_seconds)
    print(f"{kind}: {n} in {times[0]:.2f} s, {4 * n} in {times[1]:.2f} s: x{ratio:.1f} for x4 "
          f"(at most x{max_ratio:g}" + (f", {max_seconds:g} s" if max_seconds else "") + f"): {'ok' if ok else 'TOO SLOW'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
