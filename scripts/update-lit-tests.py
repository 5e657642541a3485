#!/usr/bin/env python3
"""Rewrites the expected output of lit tests after an intended change (like Carbon's autoupdate).

The RUN lines run in order, as lit runs them (the ones without FileCheck too: they make the
files that later lines read). Where a RUN line checks with FileCheck (`cmd | FileCheck ...`,
`FileCheck ... < FILE` or `FileCheck ... --input-file=FILE`), FileCheck checks the command's
output or the file; while a directive fails ("expected string not found"), the
directive's text is replaced after the output line that is most like it, and FileCheck runs
again: the regular expressions ({{...}}, [[@LINE-1]], ...) that still match at the start and at
the end of that line are kept, the literal text between them is taken from the line. What it
cannot rewrite (CHECK-NOT, -DAG, -EMPTY, a line with nothing alike) and a RUN line without
FileCheck that fails are listed for a person to edit; a test that REQUIRES a feature this
machine lacks is skipped. Review the diff before committing it.

  update-lit-tests.py [--build DIR | --tools DIR] [--dry-run] TEST...

  --build DIR   the build directory (default: build): tools are DIR/bin/tesserac, ...
  --tools DIR   the directory of the tools instead (DIR/tesserac, ...)
  --dry-run     print what would change, write nothing
Exits 0 when every RUN line passes afterwards, 1 otherwise."""
import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def filecheck_path():
    for d in ("/usr/lib/llvm-19/bin", "/usr/bin"):
        p = os.path.join(d, "FileCheck")
        if os.path.exists(p):
            return p
    return "FileCheck"


def run_lines(text):
    """The RUN commands of a test, with their line numbers (continuations joined)."""
    out, pending, start = [], "", 0
    for i, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*(?:#|//|;)\s*RUN:\s?(.*)$", line)
        if not m:
            continue
        part = m.group(1).rstrip()
        if not pending:
            start = i
        if part.endswith("\\"):
            pending += part[:-1] + " "
            continue
        out.append((start, pending + part))
        pending = ""
    return out


def substitute(cmd, test, tools, tmp):
    subs = [
        ("%tessera-opt", os.path.join(tools, "tessera-opt")),
        ("%tessera-lsp", os.path.join(tools, "tessera-lsp")),
        ("%tesserac", os.path.join(tools, "tesserac")),
        ("%{tools}", tools),
        ("%src_root", ROOT),
        ("%s", test),
        ("%S", os.path.dirname(test)),
        ("%p", os.path.dirname(test)),
        ("%t", os.path.join(tmp, "t")),
        ("%T", tmp),
    ]
    for k, v in subs:
        cmd = cmd.replace(k, v)
    return cmd


def split_filecheck(cmd):
    """(producer command, FileCheck arguments) when the command checks with FileCheck: the
    command before `| FileCheck ...`, or `cat FILE` for `FileCheck ... < FILE` and
    `FileCheck ... --input-file=FILE`. (None, None) for any other command."""
    m = re.search(r"(?:^|\|)\s*FileCheck\s+([^|]*)$", cmd)
    if not m:
        return None, None
    producer, args = cmd[: m.start()].strip(), m.group(1)
    redirect = re.search(r"\s<\s*(\S+)\s*$", args)
    if redirect:
        producer, args = "cat " + shlex.quote(redirect.group(1)), args[: redirect.start()]
    fc_args, words, i = [], shlex.split(args), 0
    while i < len(words):
        if words[i] == "--input-file" and i + 1 < len(words):
            producer = "cat " + shlex.quote(words[i + 1])
            i += 2
            continue
        if words[i].startswith("--input-file="):
            producer = "cat " + shlex.quote(words[i].split("=", 1)[1])
        else:
            fc_args.append(words[i])
        i += 1
    return (producer or None), fc_args


def features(tools):
    """The lit features tests/lit.cfg.py sets that this machine has: cuda (the build found the
    CUDA toolkit) and spec (the spec chapters beside the repository)."""
    found = set()
    try:
        site = open(os.path.join(os.path.dirname(tools), "tests", "lit.site.cfg.py"), encoding="utf-8").read()
        if 'have_cuda = "ON"' in site:
            found.add("cuda")
    except OSError:
        pass
    if os.path.isdir(os.path.join(ROOT, "..", "shared", "spec")):
        found.add("spec")
    return found


def missing_features(text, tools):
    """The features that a test's REQUIRES: lines name and this machine lacks."""
    need = set()
    for m in re.finditer(r"^\s*(?:#|//|;)\s*REQUIRES:(.*)$", text, re.M):
        need |= {f.strip() for f in m.group(1).split(",") if f.strip()}
    return sorted(need - features(tools))


def segments(text):
    """The parts of a FileCheck pattern: ("lit", text) and ("re", block) for {{...}} and [[...]]."""
    out, i = [], 0
    for m in re.finditer(r"\{\{.*?\}\}|\[\[.*?\]\]", text):
        if m.start() > i:
            out.append(("lit", text[i:m.start()]))
        out.append(("re", m.group(0)))
        i = m.end()
    if i < len(text):
        out.append(("lit", text[i:]))
    return out


def to_regex(segs, lineno):
    """A Python regex for FileCheck pattern parts; [[@LINE+-N]] is the directive's line."""
    parts = []
    for kind, t in segs:
        if kind == "lit":
            parts.append(re.escape(t))
        elif t.startswith("{{"):
            parts.append("(?:" + t[2:-2] + ")")
        else:
            inner = t[2:-2]
            m = re.match(r"@LINE(?:([+-])(\d+))?$", inner)
            if m:
                n = lineno + (int(m.group(2)) * (1 if m.group(1) == "+" else -1) if m.group(1) else 0)
                parts.append(str(n))
            elif ":" in inner:
                parts.append("(?:" + inner.split(":", 1)[1] + ")")
            else:
                parts.append(".*?")  # a variable defined by an earlier directive
    return "".join(parts)


def keep_regexes(old_segs, new, lineno):
    """`new` with the spans that the old pattern's regex parts line up with (and still match)
    written as those regex parts again."""
    marks = [t for k, t in old_segs if k == "re"]
    if not marks:
        return new
    a = "".join("\0" if k == "re" else t for k, t in old_segs)
    out, mark = [], 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, new, autojunk=False).get_opcodes():
        n_marks = a[i1:i2].count("\0")
        span = new[j1:j2]
        if n_marks == 1 and a[i1:i2] == "\0":
            rx = marks[mark]
            mark += 1
            if re.fullmatch(to_regex([("re", rx)], lineno), span):
                out.append(rx)
                continue
        else:
            mark += n_marks
        out.append(span)
    return "".join(out)


def rewrite(old, line, lineno):
    """`old` with its literal text replaced after `line`: the regex parts that still match at the
    start and at the end are kept, the text between them is taken from `line`."""
    segs = segments(old)
    n = len(segs)
    best_k, pe, ps = 0, 0, 0
    catch_all = ("{{.*}}", "{{.+}}")
    for k in range(n, 0, -1):
        if k < n and segs[k - 1][1] in catch_all:
            continue  # a prefix ending in {{.*}} would swallow the rest of the line
        m = re.search(to_regex(segs[:k], lineno), line)
        if m:
            best_k, ps, pe = k, m.start(), m.end()
            break
    if best_k == n:
        return None  # it matches already: the failure is elsewhere
    tail_k, ss = 0, len(line)
    for k in range(n - best_k, 0, -1):
        last = None
        for m in re.finditer(to_regex(segs[n - k:], lineno), line[pe:]):
            last = m
        if last and (segs[n - k][0] == "re" or k < n - best_k):
            tail_k, ss = k, pe + last.start()
            if segs[n - k][1] in catch_all and k > 1:
                # {{.*}} would start the tail right at the head and take the middle's text:
                # the tail starts where the text after its {{.*}} does instead.
                after = [m for m in re.finditer(to_regex(segs[n - k + 1:], lineno), line[pe:])]
                if after:
                    ss = pe + after[-1].start()
            break
    middle = line[pe:ss]
    old_middle = "".join(t for _, t in segs[best_k:n - tail_k])
    if tail_k and segs[n - tail_k][1] in catch_all:
        # a catch-all tail: keep as much of the line as the old text covered
        sm = difflib.SequenceMatcher(None, old_middle, middle, autojunk=False)
        blocks = [b for b in sm.get_matching_blocks() if b.size]
        if blocks:
            last = blocks[-1]
            middle = middle[:min(len(middle), last.b + last.size + len(old_middle) - (last.a + last.size))]
    if best_k == 0:
        # nothing of the old pattern matches at its start: line the literal text up instead
        sm = difflib.SequenceMatcher(None, old, line, autojunk=False)
        blocks = [b for b in sm.get_matching_blocks() if b.size]
        if blocks:
            middle = line[max(0, blocks[0].b - blocks[0].a):ss]
    if "{{" in middle or "[[" in middle:
        return None
    middle = keep_regexes(segs[best_k:n - tail_k], middle, lineno)
    keep_head = "".join(t for _, t in segs[:best_k])
    keep_tail = "".join(t for _, t in segs[n - tail_k:]) if tail_k else ""
    new = keep_head + middle.rstrip() if not keep_tail else keep_head + middle + keep_tail
    return new if new != old else None


def fix_directive(lines, index, output, prefixes):
    """Rewrites directive `lines[index]` after the output line most like it; None if it cannot."""
    pat = "|".join(re.escape(p) for p in prefixes)
    m = re.match(r"(\s*(?:#|//|;)\s*(?:%s)(?:-NEXT|-SAME|-LABEL)?:\s?)(.*)$" % pat, lines[index])
    if not m:
        return None
    head, old = m.group(1), m.group(2)
    literal = "".join(t for k, t in segments(old) if k == "lit")
    # The line that holds the most of the old literal text, in order (ties: the closest).
    best, score = None, (0.0, 0.0)
    for out in output.splitlines():
        if not out.strip():
            continue
        sm = difflib.SequenceMatcher(None, literal, out, autojunk=False)
        covered = sum(b.size for b in sm.get_matching_blocks()) / max(1, len(literal))
        if (covered, sm.ratio()) > score:
            best, score = out, (covered, sm.ratio())
    if best is None or score[0] < 0.5:
        return None
    new = rewrite(old, best, index + 1)
    if new is None:
        return None
    lines[index] = head + new
    return (old, new)


# Commands' output as text; bytes that are not UTF-8 (tests of invalid input) pass through.
TEXT = {"encoding": "utf-8", "errors": "surrogateescape"}


def update(test, tools, dry_run):
    text = open(test, **TEXT).read()
    lines = text.split("\n")
    ok = True
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([tools, "/usr/lib/llvm-19/bin", env.get("PATH", "")])
    env["TERM"] = "dumb"
    changes = []
    missing = missing_features(text, tools)
    if missing:
        print(f"{test}: skipped (REQUIRES: {', '.join(missing)})")
        return True
    with tempfile.TemporaryDirectory() as tmp:
        for lineno, raw in run_lines(text):
            cmd = substitute(raw, test, tools, tmp)
            producer, fc_args = split_filecheck(cmd)
            if producer is None or any(a not in (test,) and not a.startswith("-") for a in fc_args):
                # A command that makes files for later lines, or checks another file: run it.
                r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=tmp, env=env, capture_output=True,
                                   **TEXT)
                if r.returncode != 0:
                    print(f"{test}:{lineno}: this RUN line fails (not an expectation to update):\n"
                          f"{(r.stdout + r.stderr).strip()[:2000]}")
                    ok = False
                continue
            prefixes = ["CHECK"]
            for a in fc_args:
                m = re.match(r"--?check-prefix(?:es)?=(.*)", a)
                if m:
                    prefixes = m.group(1).split(",")
            produced = subprocess.run(["bash", "-o", "pipefail", "-c", producer], cwd=tmp, env=env,
                                      capture_output=True, **TEXT).stdout
            for _ in range(200):
                with open(os.path.join(tmp, "check.txt"), "w", **TEXT) as f:
                    f.write("\n".join(lines))
                args = [filecheck_path(), os.path.join(tmp, "check.txt")] + [a for a in fc_args if a != test]
                r = subprocess.run(args, input=produced, capture_output=True, **TEXT, env=env)
                if r.returncode == 0:
                    break
                m = re.search(r"check\.txt:(\d+):\d+: error: (\S+): expected string not found", r.stderr)
                fixed = fix_directive(lines, int(m.group(1)) - 1, produced, prefixes) if m else None
                if not fixed:
                    where = f"{test}:{m.group(1)}" if m else f"{test}:{lineno}"
                    print(f"{where}: cannot update this directive; edit it by hand:\n{r.stderr.strip()[:2000]}")
                    ok = False
                    break
                changes.append((int(m.group(1)), fixed[0], fixed[1]))
    for ln, old, new in changes:
        print(f"{test}:{ln}:\n  - {old}\n  + {new}")
    if changes and not dry_run:
        with open(test, "w", **TEXT) as f:
            f.write("\n".join(lines))
    return ok


def main():
    args = sys.argv[1:]
    tools = os.path.join(ROOT, "build", "bin")
    dry_run = False
    if "--build" in args:
        k = args.index("--build")
        tools = os.path.join(os.path.abspath(args[k + 1]), "bin")
        del args[k:k + 2]
    if "--tools" in args:
        k = args.index("--tools")
        tools = os.path.abspath(args[k + 1])
        del args[k:k + 2]
    if "--dry-run" in args:
        dry_run = True
        args.remove("--dry-run")
    if not args:
        print(__doc__)
        return 2
    ok = True
    for t in args:
        ok = update(os.path.abspath(t), tools, dry_run) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
