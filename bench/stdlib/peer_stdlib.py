# Peer for bench/stdlib: PyTorch on the same problems (R x N rows, f32 and bf16; randn and rand of
# the same size; saxpy as y.add_(x, alpha=) on views one element in), against torch's own device
# copy in the same process. Median of 20 CUDA-event-timed runs after 3 warm-ups.
#   python3 peer_stdlib.py [R N]
import sys, torch, torch.nn.functional as F
R, N = (int(sys.argv[1]), int(sys.argv[2])) if len(sys.argv) > 2 else (32768, 8192)

def median_ms(run):
    for _ in range(3): run()
    torch.cuda.synchronize()
    ts = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); run(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return sorted(ts)[len(ts) // 2]

print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; rows {R} x {N}")
for dt, name in ((torch.float32, "f32"), (torch.bfloat16, "bf16")):
    x = torch.randn(R, N, device="cuda", dtype=dt)
    y = torch.empty_like(x)
    w = torch.ones(N, device="cuda", dtype=dt)
    b = torch.zeros(N, device="cuda", dtype=dt)
    t = torch.randint(0, N, (R,), device="cuda")
    es = x.element_size()
    io, inb = 2.0 * R * N * es, 1.0 * R * N * es
    copy = io / median_ms(lambda: y.copy_(x)) / 1e6
    print(f"{'torch copy_ ' + name:40s} {copy:9.1f} GB/s {1.0:6.2f} of copy")
    cases = [
        ("torch.softmax", io, lambda: torch.softmax(x, -1)),
        ("torch.log_softmax", io, lambda: torch.log_softmax(x, -1)),
        ("F.rms_norm", io, lambda: F.rms_norm(x, (N,), w, 1e-5)),
        ("F.layer_norm", io, lambda: F.layer_norm(x, (N,), w, b, 1e-5)),
        ("F.cross_entropy(reduction=none)", inb, lambda: F.cross_entropy(x, t, reduction="none")),
        ("sum(-1, dtype=float32)", inb, lambda: x.sum(-1, dtype=torch.float32)),
        ("argmax(-1)", inb, lambda: x.argmax(-1)),
        ("F.gelu(x + b)", io, lambda: F.gelu(x + b)),
    ]
    if dt == torch.float32:
        flat = y.view(-1)
        cases += [("torch.randn (out=)", inb, lambda: torch.randn(R * N, device="cuda", out=flat)),
                  ("torch.rand (out=)", inb, lambda: torch.rand(R * N, device="cuda", out=flat)),
                  ("saxpy y.add_(x, alpha), views 1 in", 12.0 * (R * N - 1),
                   lambda: y.view(-1)[1:].add_(x.view(-1)[1:], alpha=0.5))]
    for label, bytes_, run in cases:
        try:
            g = bytes_ / median_ms(run) / 1e6
            print(f"{label + ' ' + name:40s} {g:9.1f} GB/s {g / copy:6.2f} of copy")
        except Exception as e:  # an operator this torch lacks
            print(f"{label + ' ' + name:40s} unavailable: {e}")
