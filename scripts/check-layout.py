#!/usr/bin/env python3
"""Checks the shape of the source tree against the house rules (README, "Layout"):
  - no source file (C++ and CUDA .cpp, .h, .def, .re, .cu; Python, Tessera, shell, CMake,
    JavaScript, Lua) over 1,000 lines;
  - no function over 150 lines: in C++ and CUDA from the line its signature starts to its closing brace
    (a lambda counts toward the function that contains it); in Python and Tessera from its
    `def` to its last indented line;
  - no include of a higher stage from a lower one (the stage order is STAGES below);
  - no HAVE_TESSERA_* guard (every library is always built);
  - code generation (codegen/) does not change the Tile IR it reads: no const_cast to IR types,
    no call of the IR's mutators (setAttr, setOperand(s), eraseOperand, eraseArg).
Prints one line per violation and a summary; exits non-zero when there is any.
  check-layout.py [--max-file N] [--max-function N] ROOT"""
import os
import re
import sys

# The stages and what each may include, besides itself: stages, or single headers that are a
# stage's interface to another (the checker runs sema's analyses through sema/analyses/Analyses.h;
# the analyses never see the checker). A stage may be a room of a folder (codegen/lower); a file
# belongs to the longest stage its path starts with, and naming a stage allows its rooms too.
# Stages not listed (tools, tests, bench, examples) may include anything.
STAGES = {
    "basic": set(),
    "frontend": {"basic"},
    "sema/analyses": {"basic", "frontend", "sema"},
    "sema": {"basic", "frontend", "sema/analyses/Analyses.h"},
    "ir": {"basic"},
    "graph": {"basic", "frontend", "sema"},
    "irgen": {"basic", "frontend", "sema", "ir"},
    # codegen, by room: lowering to LLVM IR, then the target (PTX, cubins), the host object and
    # header, the sm_90a forms; CompileModule (codegen/ itself) runs them in order.
    "codegen/lower": {"basic", "ir", "runtime/include"},
    "codegen/target": {"basic", "codegen/lower"},
    "codegen/host": {"basic", "ir", "runtime/include", "codegen/lower", "codegen/target"},
    "codegen/hopper": {"basic", "ir", "runtime/include", "codegen/lower"},
    "codegen": {"basic", "ir", "runtime/include", "codegen/lower", "codegen/target", "codegen/host",
                "codegen/hopper"},
    "hostgen": {"basic", "frontend", "sema", "graph", "ir", "irgen", "codegen", "runtime/include"},
    "runtime": {"basic", "runtime/include"},
    "runtime/include": set(),
    "lsp": {"basic", "frontend", "sema"},
}
# Headers internal to their stage: no other stage includes them, whatever the table allows.
PRIVATE_HEADERS = {"sema/Checker.h": "sema"}
SOURCE_DIRS = ["basic", "frontend", "sema", "graph", "ir", "irgen", "codegen", "hostgen", "runtime", "lsp", "tools", "tests", "python",
               "bench", "examples", "stdlib", "scripts", "editors", "cmake"]
CPP_EXTENSIONS = (".cpp", ".h", ".def", ".re", ".cu")
INDENTED_EXTENSIONS = (".py", ".tessera")  # functions end where the indentation does
EXTENSIONS = CPP_EXTENSIONS + INDENTED_EXTENSIONS + (".sh", ".cmake", ".in", ".js", ".lua")
SKIP_DIRS = {"build", "build-fuzz", ".git", "out", "node_modules"}


def stage_of(rel):
    best = None
    for stage in STAGES:
        if rel.startswith(stage + "/") and (best is None or len(stage) > len(best)):
            best = stage
    return best


def may_include(stage, header):
    """Whether a file of `stage` may include `header` (a path from the repository root)."""
    owner = PRIVATE_HEADERS.get(header)
    if owner is not None:
        return stage == owner
    target = stage_of(header)
    if target is None or target == stage or header in STAGES[stage]:
        return True
    return any(target == s or target.startswith(s + "/") for s in STAGES[stage])


def sources(root):
    for top in SOURCE_DIRS:
        base = os.path.join(root, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for name in sorted(filenames):
                if name.endswith(EXTENSIONS):
                    path = os.path.join(dirpath, name)
                    yield os.path.relpath(path, root), path


def strip_code(text):
    """The text with comments, string and character literals blanked (newlines kept), and
    preprocessor lines removed, so that braces and parentheses can be counted."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if at_line_start and c == "#":
            # a preprocessor line, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append("\n")
                    i += 2
                    continue
                i += 1
            continue
        at_line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        m = re.match(r'R"([^(\s]*)\(', text[i:i + 20]) if c == "R" else None
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
            continue
        if c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        if c == "\n":
            at_line_start = True
        out.append(c)
        i += 1
    return "".join(out)


# Names of ir::Operation / ir::Block mutators that LLVM's classes do not share (addOperand and
# replaceAllUsesWith are LLVM's too), and casts that would make the IR writable.
IR_MUTATION = re.compile(r"(?:\.|->)(?:setAttr|setOperands?|eraseOperand|eraseArg)\s*\(|const_cast<\s*(?:const\s+)?ir::")

SCOPE_WORDS = re.compile(r"\b(namespace|class|struct|union|enum)\b")


def functions(text):
    """(name, first line, last line) of every function body at namespace or class scope."""
    code = strip_code(text)
    result = []
    # stack of (kind, start offset of its header, header text) for open braces
    stack = []
    header_start = 0
    i = 0
    for i, c in enumerate(code):
        if c in ";}" or c == "{":
            if c == "{":
                header = code[header_start:i]
                in_function = any(k == "function" for k, _, _ in stack)
                if in_function:
                    kind = "block"
                elif SCOPE_WORDS.search(header) and "(" not in header.split("{")[0].split(":")[0]:
                    kind = "scope"
                elif "(" in header and not re.search(r"=\s*$", header.strip()) and not header.strip().endswith("]"):
                    kind = "function"
                else:
                    kind = "block"
                stack.append((kind, header_start, header))
            elif c == "}" and stack:
                kind, start, header = stack.pop()
                if kind == "function":
                    first_char = start + len(header) - len(header.lstrip())
                    first = code.count("\n", 0, first_char) + 1
                    last = code.count("\n", 0, i) + 1
                    name = re.findall(r"([~\w:]+)\s*\(", header)
                    result.append((name[0] if name else "?", first, last))
            header_start = i + 1
    return result


def indented_functions(text):
    """(name, first line, last line) of every `def` in Python or Tessera source: from the def to
    the last non-blank line indented deeper than it."""
    lines = text.split("\n")
    result = []
    for i, line in enumerate(lines):
        m = re.match(r"(\s*)(?:async\s+)?def\s+(\w+)", line)
        if not m:
            continue
        indent, last = len(m.group(1)), i
        for j in range(i + 1, len(lines)):
            body = lines[j]
            if not body.strip():
                continue
            if len(body) - len(body.lstrip()) <= indent:
                break
            last = j
        result.append((m.group(2), i + 1, last + 1))
    return result


def main():
    args = sys.argv[1:]
    max_file, max_function = 1000, 150
    if "--max-file" in args:
        k = args.index("--max-file")
        max_file = int(args[k + 1])
        del args[k:k + 2]
    if "--max-function" in args:
        k = args.index("--max-function")
        max_function = int(args[k + 1])
        del args[k:k + 2]
    root = args[0] if args else "."
    problems = []
    files = funcs = 0
    for rel, path in sources(root):
        text = open(path, encoding="utf-8", errors="replace").read()
        files += 1
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        if lines > max_file:
            problems.append(f"{rel}: {lines} lines (more than {max_file})")
        if rel.endswith((".cpp", ".h", ".re", ".cu")):
            found = functions(text)
        elif rel.endswith(INDENTED_EXTENSIONS):
            found = indented_functions(text)
        else:
            found = []
        for name, first, last in found:
            funcs += 1
            if last - first + 1 > max_function:
                problems.append(f"{rel}:{first}: function {name} is {last - first + 1} lines (more than {max_function})")
        for m in re.finditer(r"^\s*#\s*(?:if|ifdef|ifndef|elif)\b.*\bHAVE_TESSERA_\w+", text, re.M):
            line = text.count("\n", 0, m.start()) + 1
            problems.append(f"{rel}:{line}: a HAVE_TESSERA_* guard (every library is always built)")
        if rel.startswith("codegen/") and rel.endswith(CPP_EXTENSIONS):
            code = strip_code(text)
            for m in IR_MUTATION.finditer(code):
                line = code.count("\n", 0, m.start()) + 1
                problems.append(f"{rel}:{line}: code generation changes the Tile IR it reads ({m.group(0).strip()})")
        stage = stage_of(rel)
        if stage is None:
            continue
        for m in re.finditer(r'^\s*#\s*include\s*"([^"]+)"', text, re.M):
            if may_include(stage, m.group(1)):
                continue
            line = text.count("\n", 0, m.start()) + 1
            target = stage_of(m.group(1))
            why = f"{target} is not below {stage}" if m.group(1) not in PRIVATE_HEADERS else f"internal to {target}"
            problems.append(f"{rel}:{line}: {stage} includes {m.group(1)} ({why})")
    for p in problems:
        print(p)
    print(f"{len(problems)} problems in {files} files, {funcs} functions")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
