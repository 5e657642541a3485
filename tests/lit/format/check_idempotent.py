#!/usr/bin/env python3
"""Formats every .tessera file under the given folders twice with `tesserac --format` and checks
that the second pass changes nothing, that every comment survives, and that the formatted file
still parses. Prints one line per failure and a closing 'N passed, N failed' line."""
import glob
import os
import subprocess
import sys
import tempfile


def comments(text):
    return [line.split("#", 1)[1].rstrip() for line in text.splitlines() if "#" in line]


def main():
    tesserac, folders = sys.argv[1], sys.argv[2:]
    files = sorted(f for d in folders for f in glob.glob(os.path.join(d, "*.tessera")))
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            first = subprocess.run([tesserac, "--format", f], capture_output=True, text=True)
            if first.returncode != 0:
                print(f"FAIL {f}: --format failed: {first.stderr.strip()}")
                failed += 1
                continue
            once = os.path.join(tmp, "once.tessera")
            with open(once, "w") as out:
                out.write(first.stdout)
            second = subprocess.run([tesserac, "--format", once], capture_output=True, text=True)
            problems = []
            if second.returncode != 0 or second.stdout != first.stdout:
                problems.append("not idempotent")
            with open(f) as src:
                original = src.read()
            if len(comments(original)) != len(comments(first.stdout)):
                problems.append("comments lost")
            parse_before = subprocess.run([tesserac, "--parse-only", f], capture_output=True)
            parse_after = subprocess.run([tesserac, "--parse-only", once], capture_output=True)
            if parse_before.returncode != parse_after.returncode:
                problems.append("parse result changed")
            if problems:
                print(f"FAIL {f}: {', '.join(problems)}")
                failed += 1
            else:
                passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not files else 0


if __name__ == "__main__":
    sys.exit(main())
