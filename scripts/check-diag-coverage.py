#!/usr/bin/env python3
"""Checks that every diagnostic of a registry table (.def) has a test: some CHECK line (lit) or
string (unit test) under the given test directories contains its message, up to the first
placeholder, or a unit test names its id (diag::...). Notes count too. Prints what is missing and "N of M <label> diagnostics tested".

Usage: check-diag-coverage.py LABEL DEF_FILE TEST_DIR [TEST_DIR...]
       check-diag-coverage.py --per-id LABEL DEF_FILE TEST_DIR [UNIT_DIR]
The --per-id form is stricter: every id needs its own test TEST_DIR/<id>.tessera whose CHECK
lines contain the message up to its first placeholder, or, given UNIT_DIR, a unit test there that
names it (a backstop check that sema keeps every source from reaching)."""
import os
import re
import sys


def entries(defs):
    for line in open(defs, encoding="utf-8"):
        m = re.match(r'DIAG\((\w+),\s*(\w+),\s*"(.*)"\)\s*$', line)
        if m:
            yield m.group(1), m.group(3).replace('\\"', '"')
        # Remarks: REMARK(Id, "pass", Kind, "message") (basic/RemarkDiagnostics.def).
        m = re.match(r'REMARK\((\w+),\s*"[\w-]+",\s*(\w+),\s*"(.*)"\)\s*$', line)
        if m:
            yield m.group(1), m.group(3).replace('\\"', '"')


def unit_names(unitdir, ident):
    """Whether a unit test under unitdir names diag::ident (a check no source reaches past sema)."""
    if not unitdir:
        return False
    for root, _, files in os.walk(unitdir):
        for fn in files:
            if fn.endswith(".cpp"):
                text = open(os.path.join(root, fn), encoding="utf-8", errors="ignore").read()
                if f"diag::{ident})" in text or f"diag::{ident}," in text:
                    return True
    return False


def per_id(label, defs, testdir, unitdir=None):
    ids, missing = 0, []
    for ident, fmt in entries(defs):
        ids += 1
        path = os.path.join(testdir, ident + ".tessera")
        if not os.path.exists(path) and unit_names(unitdir, ident):
            continue
        if not os.path.exists(path):
            missing.append(f"{ident}: no test {path}")
            continue
        prefix = fmt.split("{")[0]
        checks = [l for l in open(path, encoding="utf-8") if l.startswith("# CHECK")]
        if not any(prefix in l for l in checks):
            missing.append(f"{ident}: {path} does not check the message '{prefix}'")
    for m in missing:
        print(m)
    print(f"{ids - len(missing)} of {ids} {label} diagnostics tested")
    return 1 if missing else 0


def main():
    if sys.argv[1] == "--per-id":
        return per_id(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else None)
    label, defs, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    checks = []
    for d in dirs:
        for root, _, files in os.walk(d):
            for fn in files:
                path = os.path.join(root, fn)
                try:
                    text = open(path, encoding="utf-8", errors="ignore").read()
                except OSError:
                    continue
                if fn.endswith(".cpp"):
                    checks.append(text)  # unit tests compare messages as strings
                else:
                    # FileCheck directives of any prefix (CHECK:, WARN:, ...) in comments.
                    checks.extend(l for l in text.splitlines()
                                  if re.match(r"\s*(#|//|;)\s*[A-Z][A-Z0-9_-]*(-[A-Z]+)?:", l))
    blob = "\n".join(checks)
    ids, missing = 0, []
    for ident, fmt in entries(defs):
        ids += 1
        # The literal text before the first placeholder (or after it, when it starts with one).
        parts = [p for p in re.split(r"\{\d\}", fmt) if p.strip()]
        prefix = max(parts, key=len) if parts else fmt
        # A unit test may name the id instead (it checks the id and location).
        if prefix not in blob and f"diag::{ident})" not in blob and f"diag::{ident}," not in blob:
            missing.append(f"{ident}: no test checks '{prefix}'")
    for m in missing:
        print(m)
    print(f"{ids - len(missing)} of {ids} {label} diagnostics tested")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
