#!/usr/bin/env python3
"""Regenerates the entries reference of docs/stdlib.md from the library's sources.

usage: python3 stdlib/update_stdlib_doc.py [--print] [docs/stdlib.md]
Every `@kernel` of stdlib/<module>.tessera is an entry: its signature, its C name
(tessera_std_<module>_<kernel>, the generated-header ABI of docs/abi.md) and the comment block
written above it. The section between the BEGIN/END GENERATED ENTRIES markers is replaced;
--print writes the section to stdout instead (tests/lit/stdlib/doc-in-sync.test diffs it
against the document, so a new or changed entry without a regenerated reference fails).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The modules with kernels, in the order of the reference (stdlib/CMakeLists.txt builds them).
MODULES = ["nn", "reduce", "random", "linalg"]
BEGIN = "<!-- BEGIN GENERATED ENTRIES"
END = "<!-- END GENERATED ENTRIES -->"


def entries(module):
    """(signature, comment) of each kernel of stdlib/<module>.tessera, in source order."""
    lines = open(os.path.join(HERE, module + ".tessera"), encoding="utf-8").read().splitlines()
    found = []
    for i, line in enumerate(lines):
        if not line.startswith("@kernel"):
            continue
        comment = []
        j = i - 1
        while j >= 0 and lines[j].startswith("#"):
            comment.insert(0, lines[j].lstrip("#").strip())
            j -= 1
        sig = lines[i + 1]
        if not sig.startswith("def ") or not sig.endswith(":"):
            sys.exit(f"stdlib/{module}.tessera:{i + 2}: expected `def name(...):` after @kernel")
        if not comment:
            sys.exit(f"stdlib/{module}.tessera:{i + 1}: kernel without a comment (its reference text)")
        found.append((sig[4:-1], " ".join(comment), line[len("@kernel"):].strip()))
    return found


def generate():
    out = [BEGIN + ": stdlib/update_stdlib_doc.py writes this section; do not edit -->", ""]
    for m in MODULES:
        out += [f"### stdlib.{m}", "", "| Entry (C: `tessera_std_" + m + "_<name>`) | Group, shared | What it computes |",
                "|---|---|---|"]
        for sig, text, clauses in entries(m):
            out.append("| `{}` | {} | {} |".format(sig, f"`{clauses}`" if clauses else "default",
                                                   text.replace("|", "\\|")))
        out.append("")
    out.append(END)
    return "\n".join(out) + "\n"


def main():
    args = [a for a in sys.argv[1:] if a != "--print"]
    generated = generate()
    if "--print" in sys.argv[1:]:
        sys.stdout.write(generated)
        return
    doc = args[0] if args else os.path.join(HERE, "..", "docs", "stdlib.md")
    text = open(doc, encoding="utf-8").read()
    b, e = text.find(BEGIN), text.find(END)
    if b < 0 or e < 0:
        sys.exit(f"{doc}: generated-section markers not found")
    open(doc, "w", encoding="utf-8").write(text[:b] + generated + text[e + len(END) + 1:])
    print(f"updated {doc}")


if __name__ == "__main__":
    main()
