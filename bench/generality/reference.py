# What the cases of bench/generality share: the case description and a float64 evaluation of a
# program that carries, per element, a bound on the error any correct implementation may make
# (the same model as tests/exec/products_test.cpp): each f32 sum of K products in any order
# (1.01 K 2^-24 of the sum of |terms|, plus the operands' errors carried through |B|), each f32
# operation (2^-24 of its result; 2^-21 more for library tanh and exp), an activation's Lipschitz
# constant on its argument's error, and each rounding to bf16 (2^-8 of the value: an
# intermediate the implementation may keep in bf16, or the output).
from dataclasses import dataclass, field
from typing import Callable, Dict, List

import torch

F32, LIB, BF16 = 2.0 ** -24, 2.0 ** -21, 2.0 ** -8
GELU_L, SILU_L = 1.13, 1.1


@dataclass
class Case:
    name: str
    kernel: str
    shapes: List[dict]                  # timed (and checked)
    check_shapes: List[dict]            # checked only: odd extents
    inputs: Callable                    # (shape, generator) -> dict of CUDA tensors
    args: Callable                      # (inputs, out) -> the kernel's arguments in order
    out_shape: Callable                 # shape -> the output's shape
    reference: Callable                 # (inputs, shape) -> Val
    flops: Callable                     # shape -> floating-point operations
    peers: Dict[str, Callable] = field(default_factory=dict)  # name -> fn(inputs)
    bar: float = 0.9
    out_dtype: torch.dtype = torch.bfloat16


def uniform(shape, g, scale=1.0, dtype=torch.bfloat16):
    return (torch.rand(shape, device="cuda", generator=g) * 2 - 1).mul_(scale).to(dtype)


class Val:
    """float64 values with per-element error bounds."""

    def __init__(self, v, e=None):
        self.v = v.double()
        self.exact = e is None  # an input: no error to carry through a product
        self.e = torch.zeros_like(self.v) if e is None else e

    def op(self, v, e, extra=0.0):
        return Val(v, e + (F32 + extra) * v.abs())

    def matmul(self, b):
        b = b.double()
        mag = self.v.abs() @ b.abs()
        carried = torch.zeros_like(mag) if self.exact else self.e @ b.abs()
        return Val(self.v @ b, carried + 1.01 * b.shape[0] * F32 * (mag + carried))

    def __add__(self, other):
        if isinstance(other, Val):
            return self.op(self.v + other.v, self.e + other.e)
        return self.op(self.v + other.double(), self.e)

    def __mul__(self, other):
        if isinstance(other, Val):
            return self.op(self.v * other.v, self.v.abs() * other.e + other.v.abs() * self.e + self.e * other.e)
        return self.op(self.v * other, self.e * abs(other))

    def gelu(self):
        x = self.v
        y = 0.5 * x * (1 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
        return self.op(y, GELU_L * self.e, 4 * LIB)

    def silu(self):
        return self.op(self.v * torch.sigmoid(self.v), SILU_L * self.e, 4 * LIB)

    def relu(self):
        return Val(self.v.clamp_min(0), self.e)

    def round16(self):
        return Val(self.v, self.e + BF16 * (self.v.abs() + self.e))


def check(out, want):
    """Every element of `out` within its bound of `want` (NaN and infinities where it has them)."""
    got = out.double()
    finite = torch.isfinite(want.v)
    err = (got - want.v).abs()
    bound = want.e * 1.0001 + 1e-30
    inside = torch.where(finite, err <= bound, (got == want.v) | (torch.isnan(got) & torch.isnan(want.v)))
    bad = int((~inside).sum())
    worst = float((err / bound)[finite].max()) if bool(finite.any()) else 0.0
    return bad == 0, worst, bad
