# Peer for bench/host: PyTorch eager on the problems of bench_host.cpp, f32, in the same run:
# attention S=4096 D=64 (scaled_dot_product_attention, default backend; and the unfused
# matmul/softmax/matmul), and the transformer block S=2048 E=1024 16 heads (rms_norm, matmuls,
# SDPA), with TF32 off (PyTorch's default for f32 matmuls) and on. Median of 20 timed runs
# after 3 warm-ups, by CUDA events.
import math, torch, torch.nn.functional as F

def median_ms(run):
    for _ in range(3): run()
    torch.cuda.synchronize()
    ts = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); run(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return sorted(ts)[len(ts) // 2]

S, D = 4096, 64
q, k, v = (torch.rand(S, D, device="cuda") * 2 - 1 for _ in range(3))
flops = 4.0 * S * S * D
t = median_ms(lambda: F.scaled_dot_product_attention(q[None], k[None], v[None], scale=1.0))
print(f"{'PyTorch SDPA f32 S4096 D64':52s} {t:10.3f} {flops / t / 1e6:10.1f}")
t = median_ms(lambda: torch.softmax(q @ k.T, dim=-1) @ v)
print(f"{'PyTorch matmul/softmax/matmul f32 S4096 D64':52s} {t:10.3f} {flops / t / 1e6:10.1f}")

T, E, H = 2048, 1024, 16
x = torch.rand(T, E, device="cuda") * 2 - 1
wqkv = (torch.rand(E, 3 * E, device="cuda") * 2 - 1) * 0.03
wo = (torch.rand(E, E, device="cuda") * 2 - 1) * 0.03
bflops = 2.0 * T * E * 3 * E + 4.0 * T * T * E + 2.0 * T * E * E

def block():
    h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    qkv = h @ wqkv
    qh, kh, vh = (t.view(T, H, E // H).transpose(0, 1) for t in qkv.split(E, dim=-1))
    y = F.scaled_dot_product_attention(qh, kh, vh).transpose(0, 1).reshape(T, E)
    return y @ wo

for tf32 in (False, True):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    t = median_ms(block)
    print(f"{'PyTorch eager block S2048 E1024 H16' + (' (TF32)' if tf32 else ''):52s} {t:10.3f} {bflops / t / 1e6:10.1f}")
