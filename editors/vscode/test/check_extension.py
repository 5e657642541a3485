#!/usr/bin/env python3
"""Checks the VS Code extension's static parts: package.json names files that exist, the grammar
and language configuration are valid JSON, every grammar regex compiles, and the grammar gives
the expected scopes on a line of a real kernel (first match wins, as in a TextMate engine for
these single-line rules). Prints 'N passed, N failed'."""
import json
import os
import re
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL " + what)


pkg = json.load(open(os.path.join(root, "package.json")))
check(os.path.exists(os.path.join(root, pkg["main"])), "main exists")
for lang in pkg["contributes"]["languages"]:
    check(os.path.exists(os.path.join(root, lang["configuration"])), "language configuration exists")
    json.load(open(os.path.join(root, lang["configuration"])))
for g in pkg["contributes"]["grammars"]:
    check(os.path.exists(os.path.join(root, g["path"])), "grammar exists")
grammar = json.load(open(os.path.join(root, "syntaxes", "tessera.tmLanguage.json")))

rules = []


def collect(node, name=None):
    if isinstance(node, dict):
        for key in ("match", "begin", "end"):
            if key in node:
                try:
                    rx = re.compile(node[key])
                    check(True, key)
                    if key == "match":
                        rules.append((rx, node.get("name"), node.get("captures", {})))
                except re.error as e:
                    check(False, f"regex {node[key]!r}: {e}")
        for v in node.values():
            collect(v)
    elif isinstance(node, list):
        for v in node:
            collect(v)


for name in [p["include"][1:] for p in grammar["patterns"]]:
    collect(grammar["repository"][name])


def scope_at(line, text):
    """The scope of the first rule (in grammar order) whose match covers `text` in `line`."""
    start = line.index(text)
    for rx, name, caps in rules:
        for m in rx.finditer(line):
            if m.start() <= start and start + len(text) <= m.end():
                for idx, cap in caps.items():
                    if m.start(int(idx)) <= start and start + len(text) <= m.end(int(idx)):
                        return cap["name"]
                if name:
                    return name
    return None


line = "def gemm(A: bf16[M, K] @accum(fp32), C: mut f32[M, N]):  # tile.mma 8_KiB"
check(scope_at(line, "def") == "storage.type.function.tessera", "def")
check(scope_at(line, "gemm") == "entity.name.function.tessera", "function name")
check(scope_at(line, "bf16") == "support.type.dtype.tessera", "dtype")
check(scope_at(line, "accum") == "support.function.policy.tessera", "policy")
check(scope_at(line, "mut") == "storage.modifier.mut.tessera", "mut")
check(scope_at(line, "# tile") == "comment.line.number-sign.tessera", "comment")
check(scope_at("    x = tile.dot(a, b)", "tile") == "support.class.namespace.tessera", "namespace")
check(scope_at("@kernel tile[(128,)] shared(8_KiB)", "kernel") == "entity.name.function.decorator.tessera", "decorator")
check(scope_at("    s = 8_KiB", "8_KiB") == "constant.numeric.integer.tessera", "size literal")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
