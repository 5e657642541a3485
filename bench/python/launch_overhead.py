"""Per-call overhead from Python on the GPU (docs/performance.md, "Calls from Python"): a Tessera
kernel with four tensor arguments called on PyTorch CUDA tensors, beside the same kernel in Triton
(its launch from Python is the peer the issue names), PyTorch's own torch.add as a reference, and a
Tessera host function call, in the same run on the same tensors.

Each figure is the host time per call: the median over 9 runs of 1000 back-to-back calls (after
200 warm-up calls) of the wall time of the loop, divided by 1000, with a synchronisation between
runs. The kernels are tiny (4096 elements, about 2 us on the GPU), so the host's cost is what the
loop measures; the GPU time per call, from CUDA events around the same loop, is printed beside it.
Results are checked element by element first. Prints a table; writes launch_overhead.json to
$OUT when set."""
import json
import os
import statistics
import sys
import time

import torch
import triton
import triton.language as tl

import tessera

HERE = os.path.dirname(os.path.abspath(__file__))


@triton.jit
def add3_kernel(a, b, c, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(a + offs, mask=mask) + tl.load(b + offs, mask=mask) + tl.load(c + offs, mask=mask)
    tl.store(out + offs, x, mask=mask)


def per_call(fn, calls=1000, runs=9, warmup=200):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    host, gpu = [], []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(runs):
        start.record()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        end.record()
        torch.cuda.synchronize()
        host.append((t1 - t0) / calls * 1e6)
        gpu.append(start.elapsed_time(end) / calls * 1e3)
    return statistics.median(host), statistics.median(gpu), min(host)


def main():
    tessera.set_device("gpu")
    mod = tessera.compile(os.path.join(HERE, "overhead.tessera"))
    n = 4096
    g = torch.Generator(device="cuda").manual_seed(7)
    a, b, c = (torch.randn(n, device="cuda", generator=g) for _ in range(3))
    out_t, out_tr, out_pt = (torch.empty(n, device="cuda") for _ in range(3))
    grid = (triton.cdiv(n, 1024),)
    X, W = torch.randn(64, 64, device="cuda"), torch.randn(64, 64, device="cuda")

    mod.add3(a, b, c, out_t)
    add3_kernel[grid](a, b, c, out_tr, n, BLOCK=1024)
    torch.cuda.synchronize()
    want = a + b + c
    assert torch.equal(out_t, want) and torch.equal(out_tr, want), "results differ"
    assert torch.allclose(mod.affine(X, W), X @ W, rtol=1e-4, atol=1e-4)

    rows = [
        ("Tessera kernel, 4 tensors: mod.add3(a, b, c, out)", per_call(lambda: mod.add3(a, b, c, out_t))),
        ("Triton kernel, 4 tensors: add3_kernel[grid](a, b, c, out, n, BLOCK=1024)",
         per_call(lambda: add3_kernel[grid](a, b, c, out_tr, n, BLOCK=1024))),
        ("PyTorch torch.add(a, b, out=out) (reference)", per_call(lambda: torch.add(a, b, out=out_pt))),
        ("Tessera host function, 2 tensors in, 1 out: mod.affine(X, W)", per_call(lambda: mod.affine(X, W))),
    ]
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}, "
          f"Python {sys.version.split()[0]}")
    print(f"{'call':75s} {'host us/call':>13s} {'min':>7s} {'GPU us/call':>12s}")
    for name, (host, gpu, best) in rows:
        print(f"{name:75s} {host:13.2f} {best:7.2f} {gpu:12.2f}")
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "launch_overhead.json"), "w") as f:
            json.dump({name: {"host_us": h, "host_min_us": m, "gpu_us": gp} for name, (h, gp, m) in rows}, f, indent=1)


if __name__ == "__main__":
    main()
