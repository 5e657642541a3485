# bench/generality cases: the examples whose sm_90a forms the general path must keep at their
# figures (docs/performance.md): examples/gemm_tc (the tile.mma loop's form; bf16 and f32 out) and
# examples/fused_mlp (now two steps of the general schedule), beside cuBLAS and PyTorch's MLP.
import torch
import torch.nn.functional as F

from reference import Case, Val, uniform



def gemm_inputs(s, g):
    return dict(A=uniform((s["M"], s["K"]), g), B=uniform((s["K"], s["N"]), g, 0.5))


def mlp_inputs(s, g):
    M, D, H, E = s["M"], s["D"], s["H"], s["E"]
    return dict(X=uniform((M, D), g), W1=uniform((D, H), g, 0.5), b1=uniform((H,), g), W2=uniform((H, E), g, 0.25),
                b2=uniform((E,), g))


def mlp_ref(i, s):
    h = (Val(i["X"]).matmul(i["W1"]) + i["b1"]).relu().round16()
    return (h.matmul(i["W2"]) + i["b2"]).round16()


def mnk(s):
    return 2.0 * s["M"] * s["N"] * s["K"]


SHAPES = [dict(M=8192, N=8192, K=8192), dict(M=8192, N=8192, K=1024), dict(M=4096, N=14336, K=4096)]
ODD = [dict(M=1000, N=1032, K=1000)]

CASES_GEMM = [
    Case("gemm_tc_bf16", "gemm_tc_bf16", SHAPES, ODD, gemm_inputs, lambda i, o: [i["A"], i["B"], o],
         lambda s: (s["M"], s["N"]), lambda i, s: Val(i["A"]).matmul(i["B"]).round16(), mnk,
         {"cuBLAS": lambda i: i["A"] @ i["B"]}, bar=0.97),
    Case("gemm_tc", "gemm_tc", SHAPES, ODD, gemm_inputs, lambda i, o: [i["A"], i["B"], o],
         lambda s: (s["M"], s["N"]), lambda i, s: Val(i["A"]).matmul(i["B"]), mnk,
         {"cuBLAS (f32 out)": lambda i: torch.mm(i["A"], i["B"], out_dtype=torch.float32)},
         bar=0.97, out_dtype=torch.float32),
]
CASES_MLP = [
    Case("fused_mlp", "fused_mlp", [dict(M=8192, D=1024, H=1024, E=1024), dict(M=8192, D=4096, H=16384, E=4096)],
         [dict(M=1001, D=520, H=1032, E=264)], mlp_inputs,
         lambda i, o: [i["X"], i["W1"], i["b1"], i["W2"], i["b2"], o], lambda s: (s["M"], s["E"]), mlp_ref,
         lambda s: 2.0 * s["M"] * s["H"] * (s["D"] + s["E"]),
         {"eager": lambda i: torch.addmm(i["b2"], torch.relu(torch.addmm(i["b1"], i["X"], i["W1"])), i["W2"]),
          "addmm+relu epilogue": lambda i: torch.addmm(
              i["b2"], torch._addmm_activation(i["b1"], i["X"], i["W1"], use_gelu=False), i["W2"])},
         bar=0.98),
]
# run.py reads MODULE and CASES per file; this file spans two modules.
GROUPS = [("gemm_tc", CASES_GEMM), ("fused_mlp", CASES_MLP)]
