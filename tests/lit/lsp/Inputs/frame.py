#!/usr/bin/env python3
"""Writes LSP frames for the framing test: valid messages, then broken headers, then a valid
request, so the test can check the server recovers."""
import sys

def frame(body, header=None):
    b = body.encode()
    h = header if header is not None else f"Content-Length: {len(b)}\r\n"
    return h.encode() + b"\r\n" + b

out = sys.stdout.buffer
out.write(frame('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'))
# Extra headers are allowed; header names are case-insensitive.
out.write(frame('{"jsonrpc":"2.0","id":2,"method":"shutdown"}',
                'content-length: 44\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n'))
# A header block without Content-Length, then one with a bad number.
out.write(b"X-Nonsense: 1\r\n\r\n")
out.write(b"Content-Length: twelve\r\n\r\n")
out.write(frame('{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{}}'))
# A body shorter than announced at the end of the input.
out.write(b"Content-Length: 500\r\n\r\n{\"jsonrpc\"")
