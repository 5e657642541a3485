"""No local-memory spills in the memory-bound kernels (issue 14): compiles the memory-bound
examples and the standard library's modules for sm_80 and sm_90a with tesserac --resource-usage=json
(ptxas's own figures) and fails if any of their kernels has spill stores or loads, a stack frame
or local memory. Not counted: the tile-value attention kernels of stdlib.nn (compute-bound, with
their own register budgets), and KNOWN, the row kernels that still spill, each printed with its
figures so the gap stays visible (docs/performance.md, "Spills").
Usage: no_spills.py TESSERAC SRC_ROOT WORK_DIR"""
import json, os, subprocess, sys

tesserac, root, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
EXAMPLES = ["saxpy", "saxpy_launch", "scale", "group_sum", "warp_reduce_sum", "coop_example", "axpy_tiled", "tp_axpy"]
STDLIB = ["nn", "reduce", "random"]
KNOWN = {("rmsnorm_safe_f32", "sm_80"), ("rmsnorm_safe_f32", "sm_90a"), ("layernorm_safe_f32", "sm_80"),
         ("layernorm_safe_f32", "sm_90a"), ("layernorm_safe_bf16", "sm_80"), ("layernorm_safe_f16", "sm_80")}

def usage(path, extra):
    out = subprocess.run([tesserac, path, "--gpu=sm_80,sm_90a", "-o", os.path.join(work, "m.o"),
                          "--resource-usage=json"] + extra, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["kernels"]

bad, checked, known = [], 0, []
for name, path, extra in ([(e, os.path.join(root, "examples", e + ".tessera"), []) for e in EXAMPLES] +
                          [(m, os.path.join(root, "stdlib", m + ".tessera"), ["--stdlib-dir=" + root]) for m in STDLIB]):
    for k in usage(path, extra):
        if k["kernel"].startswith("flash_attention"):
            continue
        spills = k["spill_store_bytes"] + k["spill_load_bytes"] + k["stack_bytes"] + k["local_bytes"]
        line = "%s: %s for %s: %d registers, %d/%d bytes spill stores/loads, %d stack, %d local" % (
            name, k["kernel"], k["arch"], k["registers"], k["spill_store_bytes"], k["spill_load_bytes"],
            k["stack_bytes"], k["local_bytes"])
        if (k["kernel"], k["arch"]) in KNOWN:
            known.append(line)
        elif spills:
            bad.append(line)
        else:
            checked += 1
for line in known:
    print("known: " + line)
for line in bad:
    print("SPILLS: " + line)
print("%d kernels without spills, %d spilling" % (checked, len(bad)))
sys.exit(1 if bad else 0)
