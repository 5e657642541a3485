"""The spec's op.* on tensors: collectives (deterministic, through libtessera_dist) and the graph
ops (matmul, softmax, log_softmax, rmsnorm, relu, gelu, silu, sigmoid) run as host functions of
small modules shipped with the package (python/tessera/ops/*.tessera), compiled on first use.
Results are new tensors of the argument's framework; the graph ops are differentiable on PyTorch
tensors (they are @autodiff functions).

    grads = op.all_reduce(local_grads, op="sum", axis="dp")
    Y = op.matmul(A, B, tile_shape=(128, 128, 64))
"""
import os

from . import _tessera

_DTYPE_NAMES = {"float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16"}
_modules = {}


def _dtype_of(x):
    name = str(getattr(x, "dtype", "")).replace("torch.", "")
    dt = _DTYPE_NAMES.get(name)
    if dt is None:
        raise TypeError(f"tessera.op: tensors of dtype {name or type(x).__name__} are not supported "
                        "(f64, f32, f16 and bf16 are)")
    return dt


def _function(module, name, x):
    if module not in _modules:
        import tessera
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops", module + ".tessera")
        _modules[module] = tessera.compile(path, module_name=f"tessera_op_{module}")
    return getattr(_modules[module], f"{name}_{_dtype_of(x)}")


def _rank2(x, what):
    if len(x.shape) != 2:
        raise ValueError(f"tessera.op.{what}: expected a matrix, got a tensor of shape {tuple(x.shape)}")


def matmul(A, B, tile_shape=None):
    """A @ B of two matrices (f64, f32, f16, bf16; 16-bit products accumulate in f32). tile_shape
    (BM, BN, BK) is the graph op's tiling hint (docs/graph.md): checked, and left to kernel
    generation, which picks the tiling of the form it compiles."""
    if tile_shape is not None and (len(tile_shape) != 3 or any(int(t) <= 0 for t in tile_shape)):
        raise ValueError("tessera.op.matmul: tile_shape must be three positive integers (BM, BN, BK)")
    _rank2(A, "matmul")
    _rank2(B, "matmul")
    return _function("matmul", "matmul", A)(A, B)


def softmax(X, axis=-1):
    """Softmax over the last axis of a matrix."""
    if axis not in (-1, 1):
        raise ValueError("tessera.op.softmax: over the last axis only (axis=-1)")
    _rank2(X, "softmax")
    return _function("softmax", "softmax", X)(X)


def log_softmax(X, axis=-1):
    if axis not in (-1, 1):
        raise ValueError("tessera.op.log_softmax: over the last axis only (axis=-1)")
    _rank2(X, "log_softmax")
    return _function("softmax", "log_softmax", X)(X)


def rmsnorm(X):
    """rmsnorm_safe over the last axis of a matrix (no weight)."""
    _rank2(X, "rmsnorm")
    return _function("rmsnorm", "rmsnorm", X)(X)


def _elementwise(name, X):
    shape = tuple(X.shape)
    flat = X.reshape(-1)
    return _function("activations", name, X)(flat).reshape(shape)


def relu(X):
    return _elementwise("relu", X)


def gelu(X):
    """GELU, the tanh approximation (PyTorch's approximate="tanh")."""
    return _elementwise("gelu", X)


def silu(X):
    return _elementwise("silu", X)


def sigmoid(X):
    return _elementwise("sigmoid", X)


# Collectives (tessera.dist): deterministic by default, the bits independent of the transport.

def _comm(mesh, axis):
    from . import dist
    if mesh is None:
        mesh = dist.current_mesh(required=axis is not None)
    if mesh is None:
        return dist.world_comm()
    if axis is None:
        if len(mesh.axes) == 1:
            return mesh.comm(mesh.axes[0])
        return dist.world_comm()
    return mesh.comm(axis)


def _empty_like(x, shape=None):
    shape = tuple(x.shape) if shape is None else shape
    mod = type(x).__module__.split(".")[0]
    if mod == "torch":
        import torch
        return torch.empty(shape, dtype=x.dtype, device=x.device)
    if mod == "numpy":
        import numpy
        return numpy.empty(shape, dtype=x.dtype)
    raise TypeError(f"tessera.op: collectives take PyTorch tensors or NumPy arrays, got {type(x).__name__}")


def _local(x):
    from . import dist
    return x.local if isinstance(x, dist.DTensor) else x


def all_reduce(x, op="sum", axis=None, mesh=None, algo="binary_tree", deterministic=True, name="tensor"):
    """op ("sum", "max", "min", "avg") over the ranks of mesh axis `axis` (the mesh's only axis,
    or every rank, when not given) of x, as a new tensor. Deterministic: the sum is taken in a
    fixed order (algo "binary_tree", the default, or "sequential"), so its bits do not depend on
    NCCL's algorithm, protocol or the ranks' placement."""
    x = _local(x)
    out = _empty_like(x)
    _tessera.dist.all_reduce(_comm(mesh, axis), x, out, op, algo, deterministic, name)
    return out


def all_gather(x, axis=None, mesh=None, name="tensor"):
    """Every rank's x along the axis, concatenated along the first dimension, in rank order."""
    x = _local(x)
    comm = _comm(mesh, axis)
    shape = (comm.size * x.shape[0],) + tuple(x.shape[1:]) if len(x.shape) else (comm.size,)
    out = _empty_like(x, shape)
    _tessera.dist.all_gather(comm, x, out, name)
    return out


def reduce_scatter(x, op="sum", axis=None, mesh=None, algo="binary_tree", deterministic=True, name="tensor"):
    """Rank r's block r (along the first dimension) of op over the ranks of x."""
    x = _local(x)
    comm = _comm(mesh, axis)
    if not len(x.shape) or x.shape[0] % comm.size:
        raise ValueError(f"tessera.op.reduce_scatter: the first dimension of a {tuple(x.shape)} tensor does not "
                         f"divide over {comm.size} ranks")
    out = _empty_like(x, (x.shape[0] // comm.size,) + tuple(x.shape[1:]))
    _tessera.dist.reduce_scatter(comm, x, out, op, algo, deterministic, name)
    return out


def broadcast(x, root=0, axis=None, mesh=None, name="tensor"):
    x = _local(x)
    out = _empty_like(x)
    _tessera.dist.broadcast(_comm(mesh, axis), x, out, root, name)
    return out
