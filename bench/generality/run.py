#!/usr/bin/env python3
# bench/generality: kernels written as a user would (bench/generality/*.tessera, compiled into
# libtessera_generality.so), each beside its PyTorch peers in the same process on the same
# inputs. For every case and shape: the Tessera kernel runs through the runtime's C API (ctypes),
# its output is checked element by element against a float64 evaluation of the program that
# carries a per-element error bound (reference.py), and at the timed shapes Tessera and each peer
# are timed by CUDA events on the default stream (both launch there): the median over 20 blocks
# of 5 back-to-back calls after 5 warm-up calls, per call. Odd shapes (extents that are not
# multiples of any tile) are checked, not timed.
#
#   run.py LIB [--only NAME[,NAME...]] [--check-only]
#
# Cases live in cases_*.py beside this file (MODULE, the .tessera module's name, and CASES, a list
# of reference.Case; or GROUPS, a list of (module, cases)); add a file to add cases. The last lines are a table: case, shape, Tessera TFLOP/s, each peer's, the ratio to the
# fastest peer, the bar, and the check. Exit status 1 when a check fails.
import argparse
import ctypes
import glob
import importlib.util
import os
import sys
import zlib

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402

DTYPES = {torch.float64: 1, torch.float32: 2, torch.float16: 3, torch.bfloat16: 4, torch.int32: 13}


class TesseraTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 8), ("strides", ctypes.c_int64 * 8), ("device", ctypes.c_int32),
                ("reserved", ctypes.c_int32)]


def view(t):
    v = TesseraTensor()
    v.data = t.data_ptr()
    v.dtype = DTYPES[t.dtype]
    v.rank = t.dim()
    for i, (n, s) in enumerate(zip(t.shape, t.stride())):
        v.shape[i], v.strides[i] = n, s
    v.device = t.device.index or 0
    return v


class Library:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        self.lib.tessera_last_error_message.restype = ctypes.c_char_p

    def launcher(self, module, case, args):
        """A call of the kernel on `args` (tensors, floats, ints), its C arguments built once."""
        fn = getattr(self.lib, f"{module}_{case.kernel}")
        fn.restype = ctypes.c_int
        keep = [view(a) for a in args if isinstance(a, torch.Tensor)]
        cargs, views = [None], iter(keep)
        for a in args:
            if isinstance(a, torch.Tensor):
                cargs.append(ctypes.byref(next(views)))
            else:
                cargs.append(ctypes.c_float(a) if isinstance(a, float) else ctypes.c_int32(a))

        def launch():
            if fn(*cargs) != 0:
                raise RuntimeError(f"{case.kernel}: {self.lib.tessera_last_error_message().decode()}")
        launch.keep = keep  # the views live as long as the call
        return launch


def per_call_ms(run, warmups=5, blocks=20, calls=5):
    for _ in range(warmups):
        run()
    torch.cuda.synchronize()
    ts = []
    for _ in range(blocks):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(calls):
            run()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) / calls)
    return sorted(ts)[len(ts) // 2]


def load_cases():
    here = os.path.dirname(os.path.abspath(__file__))
    cases = []
    for path in sorted(glob.glob(os.path.join(here, "cases_*.py"))):
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for module, group in getattr(mod, "GROUPS", None) or [(mod.MODULE, mod.CASES)]:
            cases += [(module, c) for c in group]
    return cases


def run_case(lib, module, case, shape, timed, rows):
    label = " ".join(f"{k}={v}" for k, v in shape.items())
    g = torch.Generator(device="cuda").manual_seed(zlib.crc32(f"{case.name} {label}".encode()))
    inputs = case.inputs(shape, g)
    out = torch.full(case.out_shape(shape), float("nan"), device="cuda", dtype=case.out_dtype)
    launch = lib.launcher(module, case, case.args(inputs, out))
    launch()
    torch.cuda.synchronize()
    first = out.clone()
    launch()
    torch.cuda.synchronize()
    same = torch.equal(first.view(torch.int16) if first.element_size() == 2 else first.view(torch.int32),
                       out.view(torch.int16) if out.element_size() == 2 else out.view(torch.int32))
    want = case.reference(inputs, shape)
    ok, worst, bad = reference.check(out, want)
    ok = ok and same
    print(f"{case.name} {label}: {'ok' if ok else 'FAILED'} ({bad} elements outside their bounds, worst "
          f"{worst:.3g} of its bound{'' if same else ', second launch differs'})", flush=True)
    del want
    if not timed:
        return ok
    flops = case.flops(shape)
    t = per_call_ms(launch)
    peers = []
    for name, fn in case.peers.items():
        try:
            peers.append((name, per_call_ms(lambda: fn(inputs))))
        except Exception as e:  # a peer this PyTorch does not have
            print(f"  peer {name}: unavailable ({type(e).__name__}: {str(e).splitlines()[0]})")
    best = min(p[1] for p in peers) if peers else float("nan")
    rows.append((case.name, label, flops / t / 1e9, [(n, flops / p / 1e9) for n, p in peers], best / t, case.bar,
                 "ok" if ok else "FAILED"))
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--only", default="")
    ap.add_argument("--check-only", action="store_true")
    opts = ap.parse_args()
    lib = Library(opts.lib)
    only = set(filter(None, opts.only.split(",")))
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    ok = True
    rows = []
    for module, case in load_cases():
        if only and case.name not in only:
            continue
        for shape in case.check_shapes:
            ok &= run_case(lib, module, case, shape, False, rows)
        for shape in case.shapes:
            ok &= run_case(lib, module, case, shape, not opts.check_only, rows)
        torch.cuda.empty_cache()
    print(f"\n{'case':18s} {'shape':28s} {'Tessera':>9s}  peers (TFLOP/s)")
    for name, label, tf, peers, ratio, bar, check in rows:
        ps = ", ".join(f"{n} {v:.1f}" for n, v in peers)
        verdict = "meets" if ratio >= bar else "BELOW"
        print(f"{name:18s} {label:28s} {tf:9.1f}  {ps}  -> {ratio:.3f}x of the fastest (bar {bar}: {verdict}), "
              f"check {check}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
