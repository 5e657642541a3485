# Compares the gradients grad_dump wrote (Tessera's @autodiff / tessera.grad entry points, on the
# CPU executor or the GPU) with PyTorch autograd in float64 on the same inputs, every element
# (docs/performance.md, "Gradients against PyTorch autograd"). Usage:
#   python3 torch_grad_check.py DIR       (DIR: grad_dump's directory, with manifest.json)
# Each input is read as grad_dump stored it (bf16 or f32) and widened exactly to float64; the
# reference is the program written in PyTorch (rms norm, products, multi-head softmax attention,
# gelu with the tanh approximation, as graph.gelu) differentiated by torch.autograd at float64.
#
# The bound, per dtype of the program (eps: bf16 2^-8, f32 2^-24, the unit roundoff):
#   every element:  |ours - ref| <= A * eps * (|ref| + rms(ref))   (A: bf16 16, f32 2^8)
#   the whole:      ||ours - ref||_2 / ||ref||_2 <= B                  (B: bf16 2^-6, f32 2^-18)
# bf16 stores every intermediate value (h, qkv, the attention output, dY's products, dq/dk/dv) at
# 2^-9 relative, and a gradient goes through up to eight such roundings and the attention's
# rounded probabilities, so elements land a few eps from the exact value, counted against the
# element's own magnitude or, for elements near zero (sums that cancel), the tensor's rms; B is
# the norm-wise bound of tests/exec/host_bf16_grad_test.cpp (against float64 replays of the
# kernels' roundings). f32 sums of up to 3 * 1024 terms in a fixed order: (n + 4) eps growth of
# the terms' magnitudes. Besides, PyTorch's own autograd in the program's dtype (bf16 or f32, on
# the same device, TF32 off) is compared with the same reference: its figures are printed next
# to ours, and ours must stay within 4 times its 2-norm error (or within B / 4 where it is smaller).
# Exit status 1 when a check fails, 0 when every one holds.
import json, math, os, sys
import torch
import torch.nn.functional as F

BOUNDS = {"bf16": (16 * 2.0 ** -8, 2.0 ** -6), "f32": (2.0 ** 8 * 2.0 ** -24, 2.0 ** -18)}
DEV = "cuda" if torch.cuda.is_available() else "cpu"


def load(d, t):
    raw = open(os.path.join(d, t["file"]), "rb").read()
    if t["dtype"] == "bf16":
        bits = torch.frombuffer(bytearray(raw), dtype=torch.int16).to(torch.int32) & 0xFFFF
        x = (bits << 16).view(torch.float32)
    else:
        x = torch.frombuffer(bytearray(raw), dtype=torch.float32).clone()
    return x.reshape(t["shape"]).to(torch.float64).to(DEV)


def rms_norm(x, w=None, eps=1e-6):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y * w if w is not None else y


def attention(q, k, v, heads):
    S, E = q.shape
    Dh = E // heads
    qh, kh, vh = (t.reshape(S, heads, Dh).transpose(0, 1) for t in (q, k, v))
    if q.dtype != torch.float64 and hasattr(F, "scaled_dot_product_attention"):
        o = F.scaled_dot_product_attention(qh.unsqueeze(0), kh.unsqueeze(0), vh.unsqueeze(0))[0]
    else:
        o = torch.softmax(qh @ kh.transpose(-1, -2) / math.sqrt(Dh), dim=-1) @ vh
    return o.transpose(0, 1).reshape(S, E)


def gelu(x):
    return F.gelu(x, approximate="tanh")


# Each program: (inputs in the manifest's order) -> (output, its cotangent; None for a loss).
def block(x, Wqkv, Wo, dY):
    E = x.shape[1]
    h = rms_norm(x)
    q, k, v = (h @ Wqkv).split(E, dim=-1)
    return attention(q, k, v, E // 64) @ Wo, dY


def norm_layer(X, W, b, g, dY):
    y = rms_norm(X @ W + b, g)
    return gelu(y) * y, dY


def grad_step(W, x, y_true):
    d = gelu(x @ W) - y_true
    return (d * d).mean(), None


PROGRAMS = {"block": (block, 3), "norm_layer": (norm_layer, 4), "grad_step": (grad_step, 1)}


def gradients(case, inputs, dtype):
    fn, n = PROGRAMS[case["program"]]
    xs = [t.to(dtype).detach().requires_grad_(i < n) for i, t in enumerate(inputs)]
    out, cot = fn(*xs)
    wrt = xs[:n]
    gs = torch.autograd.grad(out, wrt, grad_outputs=None if cot is None else cot.detach())
    return [g.to(torch.float64) for g in gs]


def main():
    d = sys.argv[1]
    cases = json.load(open(os.path.join(d, "manifest.json")))
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"PyTorch {torch.__version__} on {torch.cuda.get_device_name(0) if DEV == 'cuda' else 'the CPU'}")
    print(f"{'case':18s} {'grad':6s} {'elements':>9s} {'worst/bound':>11s} {'2-norm ours':>11s} "
          f"{'PyTorch':>8s} {'bound':>6s}  verdict")
    failures = 0
    for case in cases:
        inputs = [load(d, t) for t in case["inputs"]]
        dt = case["gradients"][0]["dtype"]
        eps_a, B = BOUNDS[dt]
        ref = gradients(case, inputs, torch.float64)
        peer = gradients(case, inputs, torch.bfloat16 if dt == "bf16" else torch.float32)
        if not case["same_bits"]:
            failures += 1
            print(f"FAIL: {case['case']}: a second call gave other bits")
        for t, r, p in zip(case["gradients"], ref, peer):
            g = load(d, t)
            scale = r.pow(2).mean().sqrt().item()
            err = (g - r).abs()
            bound = eps_a * (r.abs() + scale)
            bad = int((~(err <= bound)).sum().item())  # NaN counts as outside
            worst = (err / bound).max().item() if bound.gt(0).all() else float("inf")
            rn = r.norm().item()
            ours = (g - r).norm().item() / rn if rn > 0 else float("inf")
            theirs = (p - r).norm().item() / rn if rn > 0 else float("inf")
            ok = bad == 0 and ours <= B and ours <= max(4 * theirs, B / 4)
            failures += not ok
            print(f"{case['case']:18s} {t['name']:6s} {g.numel():9d} {worst:11.3g} 2^{math.log2(max(ours, 1e-300)):8.2f} "
                  f"2^{math.log2(max(theirs, 1e-300)):6.2f} 2^{math.log2(B):3.0f}  {'ok' if ok else 'FAIL'}"
                  + (f" ({bad} elements outside)" if bad else ""))
    print(f"{len(cases)} cases: {'PASS' if failures == 0 else f'{failures} FAILED'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
