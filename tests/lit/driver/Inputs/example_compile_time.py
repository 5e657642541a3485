#!/usr/bin/env python3
"""Compile time of the examples (issue 33): compiles every example into an object and a header,
as a user's build does, for the CPU executor and, when given, with GPU code for one architecture
too, and checks that none takes more than `max_ratio` times the CPU time of the smallest example
(saxpy) in the same mode: a stage that became ten times slower on some input shows, on any
machine, however loaded. Times are the compiler's user + system CPU time with its children
(ptxas), the faster of two runs. Prints each example's time and ratio.

usage: example_compile_time.py <tesserac> <examples dir> <workdir> <max_ratio> [--gpu=ARCH]"""
import os
import resource
import subprocess
import sys

# ptxas's on-disk cache would hide the work this measures.
ENV = dict(os.environ, TESSERA_CACHE_DIR="off")


def cpu_seconds(cmd):
    best = None
    for _ in range(2):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL, env=ENV)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = t if best is None else min(best, t)
    return best


def main():
    tesserac, examples, work, max_ratio = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    gpu = [a for a in sys.argv[5:] if a.startswith("--gpu=")]
    target = gpu if gpu else ["--target=cpu"]
    os.makedirs(work, exist_ok=True)
    times = {}
    for name in sorted(os.listdir(examples)):
        if name.endswith(".tessera"):
            stem = os.path.join(work, name[: -len(".tessera")])
            times[name] = cpu_seconds([tesserac, os.path.join(examples, name), *target, "-o", stem + ".o",
                                       "-H", stem + ".h"])
    unit = max(times["saxpy.tessera"], 0.02)
    slow = []
    for name, t in times.items():
        print(f"{name}: {t:.2f} s, x{t / unit:.1f} of saxpy")
        if t / unit > max_ratio:
            slow.append(name)
    mode = gpu[0][len("--gpu="):] + " and the CPU" if gpu else "the CPU"
    print(f"{len(times)} examples for {mode}: " +
          (f"{len(slow)} over x{max_ratio:g} of saxpy: " + ", ".join(slow) if slow else f"all within x{max_ratio:g} of saxpy"))
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
