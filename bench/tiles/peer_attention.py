# Peer for bench/tiles: the block-diagonal attention of examples/flash_attention.tessera
# (softmax(Q_b K_b^T) V_b for each block b of 128 rows, no scaling) with PyTorch's
# scaled_dot_product_attention on a batch of blocks (scale=1). Median of 30 timed runs after 5 warm-ups.
import torch, torch.nn.functional as F
S, D = 32768, 128
q, k, v = (torch.randn(S // 128, 1, 128, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
run = lambda: F.scaled_dot_product_attention(q, k, v, scale=1.0)
for _ in range(5): run()
torch.cuda.synchronize()
ts = []
for _ in range(30):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record(); run(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
t = sorted(ts)[len(ts) // 2]
print(f"{'PyTorch SDPA, same blocks':44s} {t:10.3f} {4.0 * S * 128 * D / t / 1e9:10.1f}")
