#!/usr/bin/env python3
"""Regenerates the builtins section of docs/language.md from the builtins table.

usage: python3 sema/update_language_doc.py path/to/tesserac [docs/language.md]
The section between the BEGIN/END GENERATED BUILTINS markers is replaced by the output of
`tesserac --print-builtins-markdown`; tests/lit/sema/language-doc-in-sync.test fails when it is stale.
"""
import os
import subprocess
import sys

BEGIN = "<!-- BEGIN GENERATED BUILTINS"
END = "<!-- END GENERATED BUILTINS -->"


def main():
    tesserac = sys.argv[1]
    doc = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "docs", "language.md")
    generated = subprocess.run([tesserac, "--print-builtins-markdown"], check=True, capture_output=True,
                               text=True).stdout
    text = open(doc, encoding="utf-8").read()
    b = text.find(BEGIN)
    e = text.find(END)
    if b < 0 or e < 0:
        sys.exit(f"{doc}: generated-section markers not found")
    text = text[:b] + generated + text[e + len(END) + 1:]
    open(doc, "w", encoding="utf-8").write(text)
    print(f"updated {doc}")


if __name__ == "__main__":
    main()
