#!/usr/bin/env python3
"""Reads framed LSP messages (Content-Length headers) from stdin and prints each body as one
line of compact JSON with sorted keys, so tests can FileCheck single lines. Two results get a
readable form as well (printed after the JSON line):
  completion lists:  'labels <id>: a b c'
  semantic tokens:   'token <line>:<col> <len> <type> [modifiers]', decoded with the legend
                     of the initialize reply."""
import json
import sys

data = sys.stdin.buffer.read()
pos = 0
legend = None
count = 0
while True:
    start = data.find(b"Content-Length:", pos)
    if start < 0:
        break
    end = data.find(b"\r\n\r\n", start)
    length = int(data[start + 15:end].strip())
    body = data[end + 4:end + 4 + length]
    pos = end + 4 + length
    msg = json.loads(body)
    count += 1
    print(json.dumps(msg, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
    result = msg.get("result") if isinstance(msg, dict) else None
    if isinstance(result, dict) and "capabilities" in result:
        legend = result["capabilities"].get("semanticTokensProvider", {}).get("legend")
    if isinstance(result, dict) and "items" in result and "isIncomplete" in result:
        print(f"labels {msg['id']}: " + " ".join(i["label"] for i in result["items"]))
    if isinstance(result, dict) and "data" in result and legend:
        line = col = 0
        d = result["data"]
        for i in range(0, len(d), 5):
            dl, dc, ln, ty, mods = d[i:i + 5]
            line += dl
            col = col + dc if dl == 0 else dc
            names = [m for b, m in enumerate(legend["tokenModifiers"]) if mods & (1 << b)]
            print(f"token {line}:{col} {ln} {legend['tokenTypes'][ty]}" + (" " + ",".join(names) if names else ""))
print(f"# {count} messages")
