#!/usr/bin/env python3
"""Checks that the docs (README.md and docs/*.md) tell the truth about the tree:
  - every path a doc names exists: `codegen/lower/LowerToLLVM.cpp`, `graph/Build*.cpp`,
    `tests/lit/<stage>/`, and lit and exec tests by their short names (`sema/err_missing_return`
    is tests/lit/sema/err_missing_return.tessera, `tests/exec/range_steps` is range_steps_test.cpp);
  - every file a doc names by its bare name (`HopperGemm.cpp`, `GraphOps.def`) exists somewhere in
    the tree (bare names of the docs' example programs, such as `k.tessera`, are lower case and
    not checked);
  - every command-line flag a doc names (`--resource-usage`) is a flag of one of the project's
    tools, scripts or tests (a string literal "--flag" in their sources), or of an outside tool
    listed in EXTERNAL_FLAGS;
  - README.md's status table and its layout section name every folder of the tree and every tool
    under tools/, and nothing that does not exist;
  - every repository path that a comment of the sources cites (`// ... (codegen/host/HostEntries.cpp)`)
    exists (lit tests that build a tree of their own, FIXTURE_TESTS, are left out).
Prints one line per problem and a summary; exits non-zero when there is any.
  check-docs.py ROOT"""
import glob
import os
import re
import sys

TOPS = ["basic", "frontend", "sema", "ir", "irgen", "graph", "codegen", "hostgen", "runtime", "lsp", "tools",
        "tests", "bench", "examples", "stdlib", "scripts", "editors", "cmake", "docs"]
SKIP_DIRS = {"build", "build-fuzz", ".git", "node_modules", "out", ".dev", "__pycache__"}
FILE_EXTS = "cpp|h|def|py|tessera|test|tir|md|cmake|sh|re|cu|json|txt"
PATH = re.compile(r"(?<![\w./<>-])(?:(?:%s)/[A-Za-z0-9_./<>*{},-]*[A-Za-z0-9_*>}/-]|[A-Za-z0-9_-]+\.(?:%s))(?![\w])"
                  % ("|".join(TOPS), FILE_EXTS))
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]")
# Where a short name in a doc may live, and what it may leave off.
BASES = ["", "tests/lit/", "tests/", "tests/unit/"]
SUFFIXES = ["", ".tessera", ".test", ".tir", ".cpp", ".h", ".py", ".json", ".sh", "_test.cpp", "_tests.cpp"]
# Flags of programs that are not ours, as the docs use them.
EXTERNAL_FLAGS = {
    "--dump-resource-usage": "cuobjdump",
    "--report-api-errors": "compute-sanitizer",
    "--skip-license": "vsce",
    "--allow-missing-repository": "vsce",
    "--install-extension": "code",
    "--install": "cmake",
    "--build": "cmake",
    "--prefix": "cmake",
    "--target": "cmake",
    "--output-on-failure": "ctest",
    "--enable-recovery": "mpirun",
    "--oversubscribe": "mpirun",
    "--clock-control": "ncu",
}
# Sources whose citations are checked, and lit tests whose paths are a made-up tree of their own.
SOURCE_EXTS = (".cpp", ".h", ".def", ".tessera", ".py", ".sh", ".cu", ".test", ".tir", ".tgraph", ".re", ".cmake")
FIXTURE_TESTS = {"tests/lit/layout.test", "tests/lit/docs.test"}
# README.md names the rooms of the tree; these folders are not rooms.
NOT_ROOMS = {"build", "build-fuzz", "out", "node_modules"}


def skipped(name):
    """Build folders of any name (build-asan, build-dev: ignored by .gitignore's /build*/) are not sources."""
    return name in SKIP_DIRS or name.startswith("build")


def tree_files(root):
    names, dirs = set(), []
    for d, ds, fs in os.walk(root):
        ds[:] = [x for x in ds if not skipped(x) and not x.startswith(".")]
        names.update(fs)
        dirs.append(os.path.relpath(d, root))
    return names, dirs


def path_exists(root, p):
    pattern = re.sub(r"<[^>]*>", "*", p)
    pattern = re.sub(r"\{[^}]*\}", "*", pattern)
    for base in BASES:
        for suffix in SUFFIXES:
            candidate = os.path.join(root, base + pattern.rstrip("/") + suffix)
            if glob.glob(candidate) if "*" in candidate else os.path.exists(candidate):
                return True
    # A test that runs another test's program (host_programs_nopasses runs host_programs_test).
    m = re.match(r"tests/exec/(\w+?)_nopasses$", p)
    return bool(m) and os.path.exists(os.path.join(root, "tests/exec", m.group(1) + "_test.cpp"))


def known_flags(root):
    flags = set(EXTERNAL_FLAGS)
    literal = re.compile(r"[\"'](--[a-z][a-z0-9-]*[a-z0-9])")
    for top in ["tools", "scripts", "tests", "bench", "editors", "cmake", "lsp", "stdlib", "runtime", "Makefile"]:
        base = os.path.join(root, top)
        paths = [base] if os.path.isfile(base) else []
        for d, ds, fs in os.walk(base):
            ds[:] = [x for x in ds if not skipped(x)]
            paths += [os.path.join(d, f) for f in fs]
        for path in paths:
            if path.endswith((".cpp", ".h", ".py", ".sh", ".cmake", ".txt", ".js", ".lua", ".json", ".in")) or \
                    os.path.basename(path) == "Makefile":
                flags.update(literal.findall(open(path, encoding="utf-8", errors="replace").read()))
    return flags


def check_doc(root, rel, names, flags, problems):
    text = open(os.path.join(root, rel), encoding="utf-8").read()
    for i, line in enumerate(text.split("\n"), 1):
        for m in PATH.finditer(line):
            p = m.group(0).rstrip(".,")
            if "/" in p:
                if not path_exists(root, p):
                    problems.append(f"{rel}:{i}: names {p}, which does not exist")
            elif p[0].isupper() and p != "DESIGN.md" and p not in names:
                # CamelCase names are the project's own files; DESIGN.md is ../shared's
                problems.append(f"{rel}:{i}: names {p}, which is no file of the tree")
        for m in FLAG.finditer(line):
            if m.group(0) not in flags:
                problems.append(f"{rel}:{i}: names the flag {m.group(0)}, which no tool of the tree has")


def check_citations(root, problems):
    for top in TOPS:
        if top == "docs":
            continue
        for d, ds, fs in os.walk(os.path.join(root, top)):
            ds[:] = sorted(x for x in ds if not skipped(x))
            for f in sorted(fs):
                rel = os.path.relpath(os.path.join(d, f), root)
                if not f.endswith(SOURCE_EXTS) or rel in FIXTURE_TESTS:
                    continue
                for i, line in enumerate(open(os.path.join(d, f), encoding="utf-8", errors="replace"), 1):
                    for m in PATH.finditer(line):
                        p = m.group(0).rstrip(".,")
                        if "/" in p and not path_exists(root, p):
                            problems.append(f"{rel}:{i}: cites {p}, which does not exist")


def readme_rooms(root, dirs, problems):
    text = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    status = re.search(r"^## Status\n(.*?)^## ", text, re.S | re.M)
    layout = re.search(r"^## Layout\n(.*?)^## ", text, re.S | re.M)
    if not status or not layout:
        problems.append("README.md: no '## Status' or no '## Layout' section")
        return
    rows = [r for r in status.group(1).split("\n") if r.startswith("| ") and not r.startswith("| ---")][1:]
    named = set()
    for r in rows:
        cell = r.split("|")[1]
        for name in re.findall(r"`([^`]+)`", cell):
            named.add(name.rstrip("/"))
            folder = os.path.join(root, name)
            tool = os.path.join(root, "tools", name)
            if not (os.path.isdir(folder) or os.path.isdir(tool)):
                problems.append(f"README.md: the status table names {name}, which is no folder or tool of the tree")
    stages = [d for d in dirs if "/" not in d and d != "." and os.path.exists(os.path.join(root, d, "CMakeLists.txt"))
              and d not in ("tools", "tests", "bench", "examples", "cmake")]
    tools = sorted(os.listdir(os.path.join(root, "tools")))
    tools = [t for t in tools if os.path.isdir(os.path.join(root, "tools", t))]
    extra = ["runtime/dist"] if os.path.isdir(os.path.join(root, "runtime", "dist")) else []
    for s in stages + extra + tools:
        if s not in named:
            problems.append(f"README.md: the status table has no row for {s}")
    listed = re.findall(r"^(\S+)/\s", layout.group(1), re.M)
    for d in sorted(x for x in dirs if "/" not in x and x != "." and x not in NOT_ROOMS and not skipped(x)):
        if d not in listed:
            problems.append(f"README.md: the layout section does not list {d}/")
    for d in listed:
        if not os.path.isdir(os.path.join(root, d)):
            problems.append(f"README.md: the layout section lists {d}/, which does not exist")
    for t in tools:
        if not re.search(r"\b%s\b" % re.escape(t), layout.group(1)):
            problems.append(f"README.md: the layout section does not name tools/{t}")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    names, dirs = tree_files(root)
    flags = known_flags(root)
    docs = ["README.md"] + sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    problems = []
    for rel in docs:
        check_doc(root, rel, names, flags, problems)
    readme_rooms(root, dirs, problems)
    check_citations(root, problems)
    for p in problems:
        print(p)
    print(f"{len(problems)} problems in {len(docs)} docs")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
