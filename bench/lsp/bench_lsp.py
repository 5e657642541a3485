#!/usr/bin/env python3
"""Latency of tessera-lsp on a 5,000-line file: diagnostics after an edit and completion.

Builds a module of about 5,000 lines from the example kernels (each copy's functions renamed),
starts the server over stdio (LSP framing), opens the module, then repeats:
  - an edit in the middle of the file (one character typed), timed until the server publishes
    diagnostics for that version (with the server's default debounce, and with none);
  - `tile.` typed on a new line inside a kernel and a completion request sent right after it,
    as an editor does, timed until the reply arrives (completion reads the text as typed and
    the scopes of the latest analysis, so it does not wait for a re-analysis).
Prints the median, p90 and maximum of each in milliseconds.

usage: bench_lsp.py [--server build/bin/tessera-lsp] [--lines 5000] [--iterations 30]
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def build_module(lines_wanted):
    sources = []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.tessera"))):
        with open(path) as f:
            sources.append(f.read())
    out, n, copy = ["from tessera import kernel, tile, launch\n"], 1, 0
    while n < lines_wanted:
        for src in sources:
            names = re.findall(r"^def (\w+)", src, re.M)
            text = src
            for name in names:
                text = re.sub(r"\b%s\b" % re.escape(name), "%s_%d" % (name, copy), text)
            out.append("\n" + text)
            n += text.count("\n") + 1
        copy += 1
    return "".join(out)


class Client:
    def __init__(self, cmd):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next_id = 1

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def read(self):
        length = None
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise EOFError("server closed its output")
            line = line.strip()
            if not line:
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.p.stdout.read(length))

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            m = self.read()
            if m.get("id") == rid:
                return m

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_diagnostics(self, uri, version):
        while True:
            m = self.read()
            if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri \
                    and m["params"].get("version") == version:
                return m

    def close(self):
        self.request("shutdown", None)
        self.notify("exit", None)
        self.p.wait(timeout=10)


def summary(name, xs):
    xs = sorted(xs)
    p90 = xs[min(len(xs) - 1, int(len(xs) * 0.9))]
    print(f"{name:48s} median {statistics.median(xs):7.1f} ms   p90 {p90:7.1f} ms   max {xs[-1]:7.1f} ms")
    return statistics.median(xs), p90


def run(server, text, iterations, debounce):
    cmd = [server] + ([f"--debounce-ms={debounce}"] if debounce is not None else [])
    c = Client(cmd)
    c.request("initialize", {"capabilities": {}})
    c.notify("initialized", {})
    uri = "file:///bench/large.tessera"
    t0 = time.perf_counter()
    c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "tessera", "version": 1, "text": text}})
    c.wait_diagnostics(uri, 1)
    open_ms = (time.perf_counter() - t0) * 1000
    lines = text.split("\n")
    mid = len(lines) // 2
    # A line inside a kernel body near the middle, to type into.
    target = next(i for i in range(mid, len(lines)) if lines[i].startswith("    ") and lines[i].strip())
    col = len(lines[target])
    version = 1
    diag_ms = []
    for k in range(iterations):
        version += 1
        ch = " " if k % 2 == 0 else ""
        rng = {"start": {"line": target, "character": col}, "end": {"line": target, "character": col + (0 if ch else 1)}}
        t0 = time.perf_counter()
        c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                            "contentChanges": [{"range": rng, "text": ch}]})
        c.wait_diagnostics(uri, version)
        diag_ms.append((time.perf_counter() - t0) * 1000)
    comp_ms, local_ms = [], []
    items = local_items = 0
    line = target + 1
    indent = " " * (len(lines[target]) - len(lines[target].lstrip()))
    for k in range(iterations):
        for typed, sink in (("t = tile.", comp_ms), ("t = ", local_ms)):
            version += 1
            c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [
                {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
                 "text": indent + typed + "\n"}]})
            t0 = time.perf_counter()
            r = c.request("textDocument/completion", {"textDocument": {"uri": uri},
                                                      "position": {"line": line, "character": len(indent) + len(typed)}})
            sink.append((time.perf_counter() - t0) * 1000)
            if typed.endswith("."):
                items = len(r["result"]["items"])
            else:
                local_items = len(r["result"]["items"])
            version += 1
            c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [
                {"range": {"start": {"line": line, "character": 0}, "end": {"line": line + 1, "character": 0}},
                 "text": ""}]})
    c.close()
    return open_ms, diag_ms, comp_ms, items, local_ms, local_items


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", default=os.path.join(ROOT, "build", "bin", "tessera-lsp"))
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--iterations", type=int, default=30)
    args = ap.parse_args()
    text = build_module(args.lines)
    print(f"module: {text.count(chr(10))} lines, {len(text)} bytes; server: {args.server}")
    open_ms, diag0, _, _, _, _ = run(args.server, text, args.iterations, 0)
    print(f"{'open to first diagnostics':48s} {open_ms:7.1f} ms")
    summary("edit -> diagnostics (no debounce: analysis time)", diag0)
    # As an editor runs it: default debounce, completion sent right after the keystroke.
    _, diag_default, comp, items, local, local_items = run(args.server, text, args.iterations, None)
    d_med, d_p90 = summary("edit -> diagnostics (default debounce)", diag_default)
    c_med, c_p90 = summary(f"completion after 'tile.' ({items} items)", comp)
    l_med, l_p90 = summary(f"completion in a kernel body ({local_items} items)", local)
    ok = d_p90 <= 200 and c_p90 <= 50 and l_p90 <= 50
    print(f"targets (p90): diagnostics <= 200 ms, completion <= 50 ms: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
