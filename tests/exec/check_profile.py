#!/usr/bin/env python3
"""TESSERA_PROFILE on the CPU executor: runs each execution test with profiling on and checks
that its trace is valid Chrome trace JSON (what Perfetto and chrome://tracing read: an object
with "traceEvents", complete events with name, cat, ph, ts, dur, pid, tid) with exactly one
"launch" event per successful launch. The launches are counted outside the runtime, by the
tessera_launch wrapper linked into the tests (LaunchCounter.cpp).
Usage: check_profile.py WORK_DIR TEST_BINARY..."""
import json, os, subprocess, sys

work, binaries = sys.argv[1], sys.argv[2:]
os.makedirs(work, exist_ok=True)
failures = []
total_launches = 0
for binary in binaries:
    name = os.path.basename(binary)
    trace, count = os.path.join(work, name + ".json"), os.path.join(work, name + ".count")
    for f in (trace, count):
        if os.path.exists(f):
            os.remove(f)
    env = dict(os.environ, TESSERA_DEVICE="cpu", TESSERA_PROFILE=trace, TESSERA_TEST_LAUNCH_COUNT=count)
    run = subprocess.run([binary], env=env, capture_output=True, text=True)
    if run.returncode != 0:
        failures.append(f"{name}: exited {run.returncode}: {run.stdout[-500:]}{run.stderr[-500:]}")
        continue
    if "tessera profile:" not in run.stderr:
        failures.append(f"{name}: no summary table on stderr")
    try:
        with open(trace) as f:
            doc = json.load(f)
        with open(count) as f:
            launches = int(f.read())
    except (OSError, ValueError) as e:
        failures.append(f"{name}: {e}")
        continue
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        failures.append(f"{name}: no traceEvents list")
        continue
    timed = [e for e in events if e.get("ph") == "X"]
    bad = [e for e in timed if not (isinstance(e.get("name"), str) and e["name"] and
                                    e.get("cat") in ("launch", "copy", "collective", "graph") and
                                    isinstance(e.get("ts"), (int, float)) and e["ts"] >= 0 and
                                    isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0 and
                                    isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int) and
                                    isinstance(e.get("args", {}).get("bytes"), int))]
    if bad:
        failures.append(f"{name}: malformed events, e.g. {bad[0]}")
    recorded = sum(1 for e in timed if e["cat"] == "launch")
    if recorded != launches:
        failures.append(f"{name}: {launches} launches, {recorded} launch events in the trace")
    total_launches += launches
    print(f"{name}: {launches} launches, {recorded} launch events, {len(timed)} events in all")
for f in failures:
    print("FAIL:", f)
print(f"{len(binaries) - len(failures)} passed, {len(failures)} failed ({total_launches} launches)")
sys.exit(1 if failures or not binaries or total_launches == 0 else 0)
