# Peer for bench/tiles: examples/fused_mlp's computation, Out = relu(X W1 + b1) W2 + b2 in bf16, in
# PyTorch: two cuBLAS GEMMs with their bias (torch.addmm, cuBLASLt's bias epilogue) and the relu
# (fused into the first by torch.compile where it can; eager: a separate elementwise kernel). At
# issue 15's shapes M=8192, D=H=E=1024 and M=8192, D=4096, H=16384, E=4096 with bench_tiles'
# timing: median of 30 event-timed runs after 5 warm-ups.
import torch
import torch.nn.functional as F


def median_ms(run):
    for _ in range(5): run()
    torch.cuda.synchronize()
    ts = []
    for _ in range(30):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); run(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return sorted(ts)[len(ts) // 2]


def eager(x, w1, b1, w2, b2):
    return torch.addmm(b2, torch.relu(torch.addmm(b1, x, w1)), w2)


def fused_relu(x, w1, b1, w2, b2):
    # cuBLASLt's bias + relu epilogue in one call (what F.linear + relu lowers to under compile).
    hid = torch._addmm_activation(b1, x, w1, use_gelu=False)
    return torch.addmm(b2, hid, w2)


for M, D, H, E in ((8192, 1024, 1024, 1024), (8192, 4096, 16384, 4096)):
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.rand(M, D, device="cuda", generator=g).mul_(2).sub_(1).bfloat16()
    w1 = torch.rand(D, H, device="cuda", generator=g).mul_(2).sub_(1).bfloat16()
    b1 = torch.rand(H, device="cuda", generator=g).mul_(2).sub_(1).bfloat16()
    w2 = torch.rand(H, E, device="cuda", generator=g).mul_(2).sub_(1).bfloat16()
    b2 = torch.rand(E, device="cuda", generator=g).mul_(2).sub_(1).bfloat16()
    flops = 2.0 * M * D * H + 2.0 * M * H * E
    for name, fn in (("eager", eager), ("addmm+relu epilogue", fused_relu)):
        try:
            t = median_ms(lambda: fn(x, w1, b1, w2, b2))
        except RuntimeError as e:
            print(f"PyTorch MLP ({name}): unavailable ({str(e).splitlines()[0]})")
            continue
        label = f"PyTorch MLP ({name}) M{M} D{D} H{H} E{E}"
        print(f"{label:44s} {t:10.3f} {flops / t / 1e9:10.1f}")
        t = median_ms(lambda: [fn(x, w1, b1, w2, b2) for _ in range(10)]) / 10
        print(f"{'  x10 back to back, per call':44s} {t:10.3f} {flops / t / 1e9:10.1f}")
    del x, w1, b1, w2, b2
