"""Every diagnostic of ir/lower/LowerDiagnostics.def has a lit test tests/lit/lower/<id>.tessera
whose CHECK lines contain the message (its text up to the first placeholder)."""
import os
import re
import sys

defs, testdir = sys.argv[1], sys.argv[2]
missing = []
ids = 0
for line in open(defs, encoding="utf-8"):
    m = re.match(r'DIAG\((\w+), (\w+), "(.*)"\)\s*$', line)
    if not m:
        continue
    ids += 1
    ident, fmt = m.group(1), m.group(3).replace('\\"', '"')
    path = os.path.join(testdir, ident + ".tessera")
    if not os.path.exists(path):
        missing.append(f"{ident}: no test {path}")
        continue
    prefix = fmt.split("{")[0]
    checks = [l for l in open(path, encoding="utf-8") if l.startswith("# CHECK")]
    if not any(prefix in l for l in checks):
        missing.append(f"{ident}: {path} does not check the message '{prefix}'")
for m in missing:
    print(m)
print(f"{ids - len(missing)} of {ids} lowering diagnostics tested")
sys.exit(1 if missing else 0)
