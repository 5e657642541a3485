#!/usr/bin/env python3
"""Reads framed LSP messages (Content-Length headers) from stdin and prints each body as one
line of compact JSON with sorted keys (for tests that grep or FileCheck single lines)."""
import json
import sys

data = sys.stdin.buffer.read()
pos = 0
while True:
    start = data.find(b"Content-Length:", pos)
    if start < 0:
        break
    end = data.find(b"\r\n\r\n", start)
    length = int(data[start + 15:end].strip())
    body = data[end + 4:end + 4 + length]
    print(json.dumps(json.loads(body), sort_keys=True, separators=(",", ":")))
    pos = end + 4 + length
