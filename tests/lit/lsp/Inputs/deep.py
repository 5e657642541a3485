#!/usr/bin/env python3
"""Frames for deep-nesting.test: documents nested 100,000 levels deep (parentheses, unary
minus, subscripts, lists, a long chain of additions), each followed by feature requests."""
import json
import sys

out = sys.stdout.buffer


def send(m):
    b = json.dumps(m).encode()
    out.write(b"Content-Length: %d\r\n\r\n" % len(b) + b)


send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}})
texts = ["x = " + "(" * 100000 + "1" + ")" * 100000 + "\n", "x = " + "-" * 100000 + "1\n",
         "x = " + "a[" * 30000 + "1" + "]" * 30000 + "\n", "x = " + "[" * 100000 + "]" * 100000 + "\n",
         "x = " + "1 + " * 100000 + "1\n"]
rid = 1
for k, text in enumerate(texts):
    uri = f"file:///deep{k}.tessera"
    send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
          "params": {"textDocument": {"uri": uri, "version": 1, "text": text}}})
    td = {"uri": uri}
    at = {"line": 0, "character": 50000}
    for method, params in [("textDocument/semanticTokens/full", {}), ("textDocument/documentSymbol", {}),
                           ("textDocument/foldingRange", {}), ("textDocument/hover", {"position": at}),
                           ("textDocument/completion", {"position": at}), ("textDocument/definition", {"position": at}),
                           ("textDocument/formatting", {})]:
        send({"jsonrpc": "2.0", "id": rid, "method": method, "params": dict(params, textDocument=td)})
        rid += 1
send({"jsonrpc": "2.0", "id": 999, "method": "shutdown"})
send({"jsonrpc": "2.0", "method": "exit"})
