# Peer for bench/tiles: the attention of bench_tiles (B=2 H=8 S=2048 D=128, and issue 15's bar
# shapes B=4 H=32 S=4096 D=128 and B=8 H=16 S=8192 D=64; bf16, scale 1/sqrt(D), causal and not)
# with PyTorch's scaled_dot_product_attention, with its default backend choice and with the cuDNN
# backend. Median of 30 timed runs after 5 warm-ups.
import torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend


def median_ms(run):
    for _ in range(5): run()
    torch.cuda.synchronize()
    ts = []
    for _ in range(30):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); run(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return sorted(ts)[len(ts) // 2]


for B, H, S, D in ((2, 8, 2048, 128), (4, 32, 4096, 128), (8, 16, 8192, 64)):
    q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    for causal in (False, True):
        flops = (2.0 if causal else 4.0) * B * H * S * S * D
        for name, backends in (("default", None), ("cuDNN", [SDPBackend.CUDNN_ATTENTION])):
            run = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            label = f"PyTorch SDPA ({name}) B{B} H{H} S{S} D{D}{' causal' if causal else ''}"
            try:
                if backends:
                    with sdpa_kernel(backends):
                        t = median_ms(run)
                else:
                    t = median_ms(run)
            except RuntimeError as e:
                print(f"{label}: unavailable ({str(e).splitlines()[0]})")
                continue
            print(f"{label:44s} {t:10.3f} {flops / t / 1e9:10.1f}")
    del q, k, v
