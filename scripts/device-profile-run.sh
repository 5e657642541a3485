#!/usr/bin/env bash
# issue 19 on the GPU (copy it with bench_memory, bench_tiles, check_resource_usage.py, examples/ and
# the ru/ folder check_resource_usage.py made on the dev machine into one folder; see docs/performance.md): (1) --resource-usage against cuobjdump for every example's cubins (made on
# the dev machine), (2) TESSERA_PROFILE of bench_tiles and bench_memory (traces to $OUT),
# (3) profiling overhead on bench_memory: off/on/off/on in one call.
set -u
cd "$(dirname "$0")"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== cuobjdump comparison"
which cuobjdump || ls /usr/local/cuda/bin | head -50
python3 check_resource_usage.py prebuilt examples ru sm_80 sm_90a | tail -4
for a in sm_80 sm_90a; do cuobjdump --dump-resource-usage ru/gemm_tc.$a.cubin | grep -A1 "Function"; done
echo "== bench_tiles profiled"
TESSERA_PROFILE=$OUT/tiles.json timeout 120 ./bench_tiles 2>&1 | tail -16
echo "== bench_memory off/on/off/on"
for i in 1 2; do
  for mode in off on; do
    t0=$(date +%s.%N)
    if [ $mode = on ]; then TESSERA_PROFILE=$OUT/memory.json ./bench_memory > mem.$mode.$i.txt 2> mem.$mode.$i.err
    else ./bench_memory > mem.$mode.$i.txt 2> mem.$mode.$i.err; fi
    t1=$(date +%s.%N)
    echo "$mode $i wall $(python3 -c "print(round($t1-$t0,3))") s"
  done
done
cat mem.on.2.txt; cat mem.on.2.err | head -20
python3 - <<'PY'
import json, os, re
out = os.environ["OUT"]
for n in ("tiles.json", "memory.json"):
    d = json.load(open(os.path.join(out, n)))
    ev = [e for e in d["traceEvents"] if e.get("ph") == "X"]
    print(n, "valid JSON,", len(ev), "events,", sum(e["cat"] == "launch" for e in ev), "launches")
def rows(path):
    r = {}
    for line in open(path):
        m = re.match(r"^(.{40}) +([0-9.]+) +([0-9.]+)", line)
        if m: r[m.group(1).strip()] = float(m.group(2))
    return r
off = [rows(f"mem.off.{i}.txt") for i in (1, 2)]
on = [rows(f"mem.on.{i}.txt") for i in (1, 2)]
print(f"{'row':40} {'off ms (1/2)':>16} {'on ms (1/2)':>16} {'on/off':>8}")
for k in off[0]:
    o = [x.get(k) for x in off]; p = [x.get(k) for x in on]
    if None in o or None in p: continue
    print(f"{k:40} {o[0]:7.3f}/{o[1]:7.3f} {p[0]:7.3f}/{p[1]:7.3f} {sum(p)/sum(o):8.4f}")
PY
