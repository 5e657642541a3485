#!/usr/bin/env python3
"""Checks tesserac --resource-usage=json against the toolkit's own reports, for every example
and each GPU architecture: the same cubin (tesserac --emit=cubin) is read by
  - ptxas -v on the same PTX (tesserac --emit=ptx): registers, stack frame, spills, shared memory;
  - cuobjdump --dump-resource-usage: REG, STACK, SHARED, LOCAL (skipped, saying so, when the
    toolkit has no cuobjdump).
Usage: check_resource_usage.py TESSERAC EXAMPLES_DIR WORK_DIR [ARCH...]
With TESSERAC "prebuilt", the PTX, cubins and JSON reports a previous run left in WORK_DIR are
compared again (on a machine whose toolkit has cuobjdump but no tesserac)."""
import json, os, re, shutil, subprocess, sys

tesserac, examples, work = sys.argv[1:4]
archs = sys.argv[4:] or ["sm_80", "sm_90a"]
cuda = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
ptxas = os.path.join(cuda, "bin", "ptxas")
cuobjdump = shutil.which("cuobjdump", path=os.path.join(cuda, "bin")) or shutil.which("cuobjdump")
os.makedirs(work, exist_ok=True)
failures, checked = [], 0


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def ptxas_report(ptx, arch):
    out = subprocess.run([ptxas, "-v", f"-arch={arch}", "-O3", "-o", os.devnull, ptx], check=True,
                         capture_output=True, text=True)
    text, fns, cur = out.stdout + out.stderr, {}, None
    for line in text.splitlines():
        m = re.search(r"Function properties for (\S+)", line) or re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            cur = fns.setdefault(m.group(1), {"smem": 0})
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and cur is not None:
            cur.update(frame=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m and cur is not None:
            cur["registers"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            cur["smem"] = int(s.group(1)) if s else 0
    return fns


def cuobjdump_report(cubin):
    text, fns, cur = run(cuobjdump, "--dump-resource-usage", cubin), {}, None
    for line in text.splitlines():
        m = re.match(r"\s*Function (\S+):", line)
        if m:
            cur = m.group(1)
            continue
        if cur and "REG:" in line:
            fns[cur] = {k: int(v) for k, v in re.findall(r"(\w+):(\d+)", line)}
    return fns


def expect(what, ours, theirs):
    global checked
    checked += 1
    if ours != theirs:
        failures.append(f"{what}: tesserac says {ours}, the toolkit says {theirs}")


if not cuobjdump:
    print(f"cuobjdump: not found in {cuda}/bin or on PATH: the comparison with cuobjdump is skipped "
          "(ptxas -v is still compared)")
names = sorted(f for f in os.listdir(examples) if f.endswith(".tessera"))
for name in names:
    src = os.path.join(examples, name)
    stem = name[:-len(".tessera")]
    for arch in archs:
        base = os.path.join(work, f"{stem}.{arch}")
        if tesserac != "prebuilt":
            run(tesserac, src, f"--gpu={arch}", "--emit=ptx", "-o", base + ".ptx")
            with open(base + ".json", "w") as f:
                f.write(run(tesserac, src, f"--gpu={arch}", "--emit=cubin", "-o", base + ".cubin",
                            "--resource-usage=json"))
        with open(base + ".json") as f:
            report = json.load(f)
        px = ptxas_report(base + ".ptx", arch)
        cu = cuobjdump_report(base + ".cubin") if cuobjdump else None
        for k in report["kernels"]:
            fn, tag = k["function"], f"{stem} {arch} {k['kernel']}"
            p = px.get(fn)
            if p is None:
                failures.append(f"{tag}: ptxas reported no function {fn}")
                continue
            expect(f"{tag} registers (ptxas)", k["registers"], p["registers"])
            expect(f"{tag} stack (ptxas frame)", k["stack_bytes"], p["frame"])
            expect(f"{tag} spill stores (ptxas)", k["spill_store_bytes"], p["spill_stores"])
            expect(f"{tag} spill loads (ptxas)", k["spill_load_bytes"], p["spill_loads"])
            reserved = 1024 if k["static_shared_includes_reserved"] and k["static_shared_bytes"] >= 1024 else 0
            expect(f"{tag} static shared (ptxas smem + reserved {reserved})", k["static_shared_bytes"],
                   p["smem"] + reserved)
            if cu is not None:
                c = cu.get(fn)
                if c is None:
                    failures.append(f"{tag}: cuobjdump reported no function {fn}")
                    continue
                expect(f"{tag} REG (cuobjdump)", k["registers"], c.get("REG"))
                expect(f"{tag} STACK (cuobjdump)", k["stack_bytes"], c.get("STACK"))
                expect(f"{tag} SHARED (cuobjdump)", k["static_shared_bytes"], c.get("SHARED"))
                expect(f"{tag} LOCAL (cuobjdump)", k["local_bytes"], c.get("LOCAL"))
            print(f"{tag}: {k['registers']} registers, {k['stack_bytes']} B stack, "
                  f"{k['static_shared_bytes']} B static shared, {k['local_bytes']} B local: agree")
for f in failures:
    print("MISMATCH:", f)
print(f"{checked} figures compared ({'ptxas -v and cuobjdump' if cuobjdump else 'ptxas -v'}), "
      f"{len(failures)} mismatches")
sys.exit(1 if failures or not checked else 0)
