"""PyTorch integration: @autodiff host functions in torch.autograd, and as torch.library custom
ops (PyTorch 2.4 and later) whose fake-tensor shape functions come from the graph's shape rules,
so that torch.compile calls them without a graph break.

    f = tessera.torch.op(mod.block)     # a custom op (torch >= 2.4), differentiable
    y = f(x, Wqkv, Wo)                  # or mod.block(x, Wqkv, Wo): autograd too, eager only
"""
import inspect
import re

import torch

from . import _header

_DTYPES = {"f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
           "i8": torch.int8, "i16": torch.int16, "i32": torch.int32, "i64": torch.int64, "u8": torch.uint8,
           "bool": torch.bool}
for _name, _attr in (("fp8_e4m3", "float8_e4m3fn"), ("fp8_e5m2", "float8_e5m2")):
    if hasattr(torch, _attr):
        _DTYPES[_name] = getattr(torch, _attr)
_FLOATS = ("f64", "f32", "f16", "bf16")
_ops = {}  # (module name, function name) -> the registered custom op


def torch_version():
    m = re.match(r"(\d+)\.(\d+)", torch.__version__)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def has_custom_ops():
    """Whether this PyTorch registers custom ops with fake-tensor functions (torch.library.custom_op,
    2.4 and later)."""
    return torch_version() >= (2, 4) and hasattr(torch.library, "custom_op")


def needs_grad(args):
    return torch.is_grad_enabled() and any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)


def _grad_params(fn):
    """Indices of the parameters the backward entry returns gradients for: the floating-point
    tensors, in parameter order (docs/graph.md, "Autodiff")."""
    return [i for i, p in enumerate(fn.decl.params) if p.kind == "tensor" and p.type.dtype in _FLOATS]


def _backward_call(fn, inputs, grads, backward=None):
    """The backward entry (`backward`: its custom op, else the entry itself) on the saved inputs
    and the output cotangents (missing ones are zeros; all made dense, as entry points take dense
    tensors); the gradients per input (None for those that have none)."""
    shapes = fn.result_shapes(*[tuple(x.shape) if isinstance(x, torch.Tensor) else None for x in inputs])
    outs = []
    for r, g, shape in zip(fn.decl.results, grads, shapes):
        if g is None:
            ref = next(x for x in inputs if isinstance(x, torch.Tensor))
            g = torch.zeros(shape, dtype=_DTYPES[r.dtype], device=ref.device)
        outs.append(g.contiguous())
    dense = [x.detach().contiguous() if isinstance(x, torch.Tensor) else x for x in inputs]
    got = (backward or fn.backward.call_raw)(*dense, *outs)
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    result = [None] * len(inputs)
    for i, g in zip(_grad_params(fn), got):
        result[i] = g
    return result


class _Autodiff(torch.autograd.Function):
    """Forward and backward entries of an @autodiff host function as one autograd.Function."""

    @staticmethod
    def forward(ctx, fn, *args):
        ctx.fn = fn
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        ctx.save_for_backward(*tensors)
        ctx.layout = [isinstance(a, torch.Tensor) for a in args]
        ctx.scalars = [a for a in args if not isinstance(a, torch.Tensor)]
        out = fn.call_raw(*[a.detach() if isinstance(a, torch.Tensor) else a for a in args])
        return tuple(out) if len(out) != 1 else out[0]

    @staticmethod
    def backward(ctx, *grads):
        saved, scalars = iter(ctx.saved_tensors), iter(ctx.scalars)
        inputs = [next(saved) if t else next(scalars) for t in ctx.layout]
        return (None, *_backward_call(ctx.fn, inputs, grads))


def apply(fn, args):
    """`fn(*args)` recorded on the autograd tape."""
    return _Autodiff.apply(fn, *args)


def _annotation(p):
    if p.kind == "tensor":
        return torch.Tensor
    return float if p.kind in _FLOATS else bool if p.kind == "bool" else int


def _register(fn):
    """torch.library.custom_op `tessera::<module>_<name>` for host function `fn`: its entry point as
    the implementation, and a fake implementation whose results have the shapes and dtypes of the
    signature's result types (the graph's shape rules) for the arguments' shapes."""
    key = (fn.module.name, fn.decl.name)
    if key in _ops:
        return _ops[key]
    decl = fn.decl
    params = [inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=_annotation(p))
              for p in decl.params]
    n = len(decl.results)
    ret = torch.Tensor if n == 1 else (tuple.__class_getitem__((torch.Tensor,) * n) if n else None)

    def impl(*args):
        out = fn.call_raw(*args)
        return out[0] if n == 1 else tuple(out)

    impl.__signature__ = inspect.Signature(params, return_annotation=ret)
    impl.__name__ = decl.name
    op = torch.library.custom_op(f"tessera::{fn.module.name}_{decl.name}", mutates_args=())(impl)

    def fake(*args):
        shapes = [tuple(a.shape) if isinstance(a, torch.Tensor) else None for a in args]
        device = next(a.device for a in args if isinstance(a, torch.Tensor))
        out = [torch.empty(s, dtype=_DTYPES[r.dtype], device=device)
               for s, r in zip(_header.result_shapes(decl, shapes), decl.results)]
        return out[0] if n == 1 else tuple(out)

    fake.__signature__ = impl.__signature__
    op.register_fake(fake)
    _ops[key] = op
    return op


def _custom_op(fn):
    """The custom op of `fn`; for an @autodiff function with its backward entry as a custom op of
    its own, called by the autograd formula (so torch.compile traces the backward as one opaque
    call too)."""
    op = _register(fn)
    if fn.backward is not None and (fn.module.name, fn.decl.name, "autograd") not in _ops:
        backward_op = _register(fn.backward)

        def setup_context(ctx, inputs, output):
            ctx.layout = [isinstance(a, torch.Tensor) for a in inputs]
            ctx.scalars = [a for a in inputs if not isinstance(a, torch.Tensor)]
            ctx.save_for_backward(*[a for a in inputs if isinstance(a, torch.Tensor)])

        def backward(ctx, *grads):
            saved, scalars = iter(ctx.saved_tensors), iter(ctx.scalars)
            inputs = [next(saved) if t else next(scalars) for t in ctx.layout]
            return tuple(_backward_call(fn, inputs, grads, backward_op))

        op.register_autograd(backward, setup_context=setup_context)
        _ops[(fn.module.name, fn.decl.name, "autograd")] = op
    return op


def op(fn):
    """`fn` (a host function of a module) as a PyTorch operator: with PyTorch 2.4 and later a
    torch.library custom op `tessera::<module>_<name>` (torch.compile keeps it in its graph, the
    fake function computes result shapes from the graph's shape rules, @autodiff functions are
    differentiable); with older PyTorch a differentiable callable (eager mode only)."""
    from ._module import HostFunction
    if not isinstance(fn, HostFunction):
        raise TypeError(f"tessera.torch.op: expected a host function of a Tessera module, got {type(fn).__name__}")
    if has_custom_ops():
        return _custom_op(fn)
    if fn.backward is None:
        return fn
    return lambda *args: apply(fn, args) if needs_grad(args) else fn(*args)
