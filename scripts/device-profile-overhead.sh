#!/usr/bin/env bash
# issue 19 on the GPU: the cost of TESSERA_PROFILE on bench_memory, and the profiles of bench_tiles
# and bench_memory (Chrome traces for Perfetto, to $OUT). Copy it with bench_memory and bench_tiles
# (built on the development machine) into one folder and run it there:
#   device-profile-overhead.sh [ROUNDS]
# bench_memory runs ROUNDS times with profiling off and on alternately, each run its own process
# (the full 1 GiB arrays), then ROUNDS more at 2^20 elements, where a launch takes a few
# microseconds and the difference on - off is the host time profiling adds before each kernel
# (the benchmark synchronises after every launch, so that time is GPU idle time). The table
# compares the medians over the rounds of the benchmark's own 20-run medians, and the process's
# wall time.
set -u
cd "$(dirname "$0")"
ROUNDS=${1:-5}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== bench_tiles profiled"
TESSERA_PROFILE=$OUT/tiles.json timeout 180 ./bench_tiles > tiles.txt 2> tiles.err
echo "rc $?"; tail -8 tiles.txt; head -12 tiles.err
run() {  # run NAME SIZE MODE ROUND
  local t0 t1
  t0=$(date +%s.%N)
  if [ "$3" = on ]; then TESSERA_PROFILE=$OUT/$1.json timeout 120 ./bench_memory $2 > $1.$3.$4.txt 2> $1.$3.$4.err
  else timeout 120 ./bench_memory $2 > $1.$3.$4.txt 2> $1.$3.$4.err; fi
  t1=$(date +%s.%N)
  echo "$1 $3 $4 wall $(python3 -c "print(round($t1-$t0,4))")" >> walls.txt
}
: > walls.txt
for i in $(seq 1 "$ROUNDS"); do
  for mode in off on; do run memory "" $mode $i; done
done
for i in $(seq 1 "$ROUNDS"); do
  for mode in off on; do run small 1048576 $mode $i; done
done
cat memory.on.1.txt; head -20 memory.on.1.err
cp walls.txt memory.on.1.err "$OUT"/ 2>/dev/null
ROUNDS=$ROUNDS python3 - <<'PY'
import json, os, re, statistics as st
out, R = os.environ["OUT"], int(os.environ["ROUNDS"])
for n in ("tiles.json", "memory.json"):
    try:
        d = json.load(open(os.path.join(out, n)))
    except Exception as e:
        print(n, "NOT valid:", e); continue
    ev = [e for e in d["traceEvents"] if e.get("ph") == "X"]
    print(n, "valid JSON,", len(ev), "events,", sum(e.get("cat") == "launch" for e in ev), "launches")
def rows(path):
    r = {}
    for line in open(path):
        m = re.match(r"^(.{40}) +([0-9.]+) +([0-9.]+)", line)
        if m: r[m.group(1).strip()] = float(m.group(2))
    return r
walls = {}
for line in open("walls.txt"):
    name, mode, i, _, w = line.split()
    walls.setdefault((name, mode), []).append(float(w))
for name in ("memory", "small"):
    off = [rows(f"{name}.off.{i}.txt") for i in range(1, R + 1)]
    on = [rows(f"{name}.on.{i}.txt") for i in range(1, R + 1)]
    print(f"\n{name}: medians over {R} rounds of the benchmark's 20-run medians (ms)")
    print(f"{'row':40} {'off':>9} {'on':>9} {'on/off':>7} {'+us':>7}  off range / on range")
    for k in off[0]:
        o = [x[k] for x in off if k in x]; p = [x[k] for x in on if k in x]
        if len(o) != R or len(p) != R: print(k, "missing rows"); continue
        mo, mp = st.median(o), st.median(p)
        print(f"{k:40} {mo:9.4f} {mp:9.4f} {mp/mo:7.4f} {1000*(mp-mo):7.2f}  "
              f"{min(o):.4f}-{max(o):.4f} / {min(p):.4f}-{max(p):.4f}")
    wo, wp = walls[(name, "off")], walls[(name, "on")]
    print(f"{'whole process (wall, s)':40} {st.median(wo):9.4f} {st.median(wp):9.4f} {st.median(wp)/st.median(wo):7.4f}"
          f"          {min(wo):.3f}-{max(wo):.3f} / {min(wp):.3f}-{max(wp):.3f}")
PY
