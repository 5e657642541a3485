# bench/generality cases: the whole-tensor products of products.tessera (issue 30's bar: single
# products at 8192^3 and at LLM shapes at least 0.9x of PyTorch (cuBLAS, cuBLASLt's fused
# epilogues where PyTorch has one), SwiGLU and three-layer chains at least 0.85x of eager PyTorch).
import torch
import torch.nn.functional as F

from reference import Case, Val, uniform

MODULE = "products"

SQUARE = dict(M=8192, N=8192, K=8192)
LLM_UP = dict(M=8192, N=14336, K=4096)    # a LLaMA-3-8B up projection
LLM_DOWN = dict(M=8192, N=4096, K=14336)  # and its down projection
ODD = dict(M=1001, N=1032, K=520)         # multiples of 8 (TMA rows), of no tile


def mnk(s):
    return 2.0 * s["M"] * s["N"] * s["K"]


def xw(s, g):
    return dict(X=uniform((s["M"], s["K"]), g), W=uniform((s["K"], s["N"]), g, 0.5))


def xwt(s, g, bias=False, residual=False):
    d = dict(X=uniform((s["M"], s["K"]), g), Wt=uniform((s["N"], s["K"]), g, 0.5))
    if bias:
        d["b"] = uniform((s["N"],), g)
    if residual:
        d["R"] = uniform((s["M"], s["N"]), g)
    return d


def out_mn(s):
    return (s["M"], s["N"])


def gelu_tanh(x):
    return F.gelu(x, approximate="tanh")


CASES = [
    Case("mm", "mm", [SQUARE, LLM_UP, LLM_DOWN], [ODD], xw, lambda i, o: [i["X"], i["W"], o], out_mn,
         lambda i, s: Val(i["X"]).matmul(i["W"]).round16(), mnk,
         {"cuBLAS": lambda i: i["X"] @ i["W"]}),
    Case("linear", "linear", [SQUARE, LLM_UP, LLM_DOWN], [ODD], xwt, lambda i, o: [i["X"], i["Wt"], o], out_mn,
         lambda i, s: Val(i["X"]).matmul(i["Wt"].T).round16(), mnk,
         {"cuBLAS": lambda i: F.linear(i["X"], i["Wt"])}),
    Case("linear_bias_gelu", "linear_bias_gelu", [SQUARE, LLM_UP], [ODD], lambda s, g: xwt(s, g, bias=True),
         lambda i, o: [i["X"], i["Wt"], i["b"], o], out_mn,
         lambda i, s: (Val(i["X"]).matmul(i["Wt"].T) + i["b"]).gelu().round16(), mnk,
         {"eager": lambda i: gelu_tanh(F.linear(i["X"], i["Wt"], i["b"])),
          "cuBLASLt epilogue": lambda i: torch._addmm_activation(i["b"], i["X"], i["Wt"].T, use_gelu=True)}),
    Case("mm_bias_gelu", "mm_bias_gelu", [SQUARE], [ODD],
         lambda s, g: dict(xw(s, g), b=uniform((s["N"],), g)), lambda i, o: [i["X"], i["W"], i["b"], o], out_mn,
         lambda i, s: (Val(i["X"]).matmul(i["W"]) + i["b"]).gelu().round16(), mnk,
         {"eager": lambda i: gelu_tanh(torch.addmm(i["b"], i["X"], i["W"])),
          "cuBLASLt epilogue": lambda i: torch._addmm_activation(i["b"], i["X"], i["W"], use_gelu=True)}),
    Case("linear_silu", "linear_silu", [SQUARE, LLM_UP], [ODD], xwt, lambda i, o: [i["X"], i["Wt"], o], out_mn,
         lambda i, s: Val(i["X"]).matmul(i["Wt"].T).silu().round16(), mnk,
         {"eager": lambda i: F.silu(F.linear(i["X"], i["Wt"]))}),
    Case("linear_residual", "linear_residual", [SQUARE, LLM_DOWN], [ODD], lambda s, g: xwt(s, g, residual=True),
         lambda i, o: [i["X"], i["Wt"], i["R"], o], out_mn,
         lambda i, s: (Val(i["X"]).matmul(i["Wt"].T) + i["R"]).round16(), mnk,
         {"cuBLAS (addmm, beta=1)": lambda i: torch.addmm(i["R"], i["X"], i["Wt"].T)}),
]


def swiglu_inputs(s, g):
    M, D, H = s["M"], s["D"], s["H"]
    return dict(X=uniform((M, D), g), W1t=uniform((H, D), g, 0.5), W3t=uniform((H, D), g, 0.5),
                W2t=uniform((D, H), g, 0.25))


def swiglu_ref(i, s):
    x = Val(i["X"])
    h = (x.matmul(i["W1t"].T).silu() * x.matmul(i["W3t"].T)).round16()
    return h.matmul(i["W2t"].T).round16()


def swiglu_eager(i):
    return F.linear(F.silu(F.linear(i["X"], i["W1t"])) * F.linear(i["X"], i["W3t"]), i["W2t"])


def mlp3_inputs(s, g):
    M, D, H = s["M"], s["D"], s["H"]
    return dict(X=uniform((M, D), g), W1=uniform((D, H), g, 0.5), b1=uniform((H,), g), W2=uniform((H, H), g, 0.25),
                b2=uniform((H,), g), W3=uniform((H, D), g, 0.25))


def mlp3_ref(i, s):
    h1 = (Val(i["X"]).matmul(i["W1"]) + i["b1"]).gelu().round16()
    h2 = (h1.matmul(i["W2"]) + i["b2"]).gelu().round16()
    return h2.matmul(i["W3"]).round16()


def mlp3_eager(i):
    h1 = gelu_tanh(torch.addmm(i["b1"], i["X"], i["W1"]))
    return gelu_tanh(torch.addmm(i["b2"], h1, i["W2"])) @ i["W3"]


CASES += [
    Case("swiglu", "swiglu", [dict(M=8192, D=4096, H=14336)], [dict(M=1001, D=520, H=1032)], swiglu_inputs,
         lambda i, o: [i["X"], i["W1t"], i["W3t"], i["W2t"], o], lambda s: (s["M"], s["D"]), swiglu_ref,
         lambda s: 6.0 * s["M"] * s["D"] * s["H"], {"eager": swiglu_eager}, bar=0.85),
    Case("mlp3", "mlp3", [dict(M=8192, D=4096, H=4096), dict(M=8192, D=1024, H=4096)], [dict(M=1001, D=520, H=1032)],
         mlp3_inputs, lambda i, o: [i["X"], i["W1"], i["b1"], i["W2"], i["b2"], i["W3"], o],
         lambda s: (s["M"], s["D"]), mlp3_ref,
         lambda s: 2.0 * s["M"] * s["H"] * (2 * s["D"] + s["H"]), {"eager": mlp3_eager}, bar=0.85),
]
