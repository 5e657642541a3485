# Peer for bench/host: PyTorch eager on the problems of bench_host.cpp, in the same run: attention
# bf16 S=16384 D=128 one head (scaled_dot_product_attention, scale 1 as the spec's module, default
# backend), and the transformer block S=2048 E=1024 16 heads (rms_norm, matmuls, SDPA) forward in
# bf16 (with the rms norm written out as in the spec, and as F.rms_norm; forward + backward too)
# and in f32 (TF32 off, PyTorch's default, and on). Median of 20 timed runs after 3 warm-ups, by CUDA events.
import torch, torch.nn.functional as F

def median_ms(run):
    for _ in range(3): run()
    torch.cuda.synchronize()
    ts = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); run(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return sorted(ts)[len(ts) // 2]

S, D = 16384, 128
q, k, v = ((torch.rand(1, 1, S, D, device="cuda") * 2 - 1).bfloat16() for _ in range(3))
flops = 4.0 * S * S * D
t = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, scale=1.0))
print(f"{'PyTorch SDPA bf16 S16384 D128':52s} {t:10.3f} {flops / t / 1e9:10.1f}")

T, E, H = 2048, 1024, 16
bflops = 2.0 * T * E * 3 * E + 4.0 * T * T * E + 2.0 * T * E * E

# heads4: SDPA on [1, H, T, D] views (its flash kernel reads the strided split directly); else
# [H, T, D] views, which (seen on an H100, PyTorch 2.x) take a slower backend.
def make_block(dtype, fused_norm, heads4=True, grad=False):
    x = (torch.rand(T, E, device="cuda") * 2 - 1).to(dtype)
    wqkv = ((torch.rand(E, 3 * E, device="cuda") * 2 - 1) * 0.03).to(dtype).requires_grad_(grad)
    wo = ((torch.rand(E, E, device="cuda") * 2 - 1) * 0.03).to(dtype).requires_grad_(grad)
    def block():
        h = F.rms_norm(x, (E,), eps=1e-6) if fused_norm else x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
        qkv = h @ wqkv
        if heads4:
            qh, kh, vh = (t.view(1, T, H, E // H).transpose(1, 2) for t in qkv.split(E, dim=-1))
            y = F.scaled_dot_product_attention(qh, kh, vh).transpose(1, 2).reshape(T, E)
        else:
            qh, kh, vh = (t.view(T, H, E // H).transpose(0, 1) for t in qkv.split(E, dim=-1))
            y = F.scaled_dot_product_attention(qh, kh, vh).transpose(0, 1).reshape(T, E)
        return y @ wo
    if not grad:
        return block
    g = torch.ones(T, E, device="cuda", dtype=dtype)
    return lambda: block().backward(g)

for fused in (False, True):
    if fused and not hasattr(F, "rms_norm"): continue
    t = median_ms(make_block(torch.bfloat16, fused))
    name = "PyTorch eager block bf16 S2048 E1024 H16" + (" (F.rms_norm)" if fused else "")
    print(f"{name:52s} {t:10.3f} {bflops / t / 1e9:10.1f}")
t = median_ms(make_block(torch.bfloat16, False, heads4=False))
print(f"{'PyTorch eager block bf16 (3-d SDPA inputs)':52s} {t:10.3f} {bflops / t / 1e9:10.1f}")
t = median_ms(make_block(torch.bfloat16, False, grad=True))
print(f"{'PyTorch eager block bf16 forward + backward':52s} {t:10.3f} {3 * bflops / t / 1e9:10.1f}")
if hasattr(F, "rms_norm"):
    t = median_ms(make_block(torch.bfloat16, True, grad=True))
    print(f"{'PyTorch eager block bf16 fwd + bwd (F.rms_norm)':52s} {t:10.3f} {3 * bflops / t / 1e9:10.1f}")
# The attention backward alone ([1, 16, 2048, 64], SDPA's default backend), as bench_host times ours.
qa, ka, va = ((torch.rand(1, 16, T, 64, device="cuda") * 2 - 1).bfloat16().requires_grad_() for _ in range(3))
oa = F.scaled_dot_product_attention(qa, ka, va)
ga = torch.rand_like(oa)
t = median_ms(lambda: torch.autograd.grad(oa, (qa, ka, va), ga, retain_graph=True))
print(f"{'PyTorch SDPA backward bf16 H16 S2048 D64':52s} {t:10.3f} {10.0 * 16 * T * T * 64 / t / 1e9:10.1f}")
for tf32 in (False, True):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    t = median_ms(make_block(torch.float32, False))
    print(f"{'PyTorch eager block f32 S2048 E1024 H16' + (' (TF32)' if tf32 else ''):52s} {t:10.3f} {bflops / t / 1e9:10.1f}")
