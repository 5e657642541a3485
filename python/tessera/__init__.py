"""Tessera from Python (docs/python.md).

    import tessera
    mod = tessera.compile("saxpy.tessera")   # tesserac, cached on disk, loaded as a shared object
    mod.saxpy(x, y, 2.0)                     # a kernel: tensors in place, scalars by value
    out = mod.mlp(X, W1, b1)                 # a host function (@jit): new tensors out

Tensors are PyTorch tensors (CPU or CUDA), NumPy arrays or any DLPack producer, passed without a
copy; results come back in the framework of the arguments. The spec's host API is here too:
tessera.dist, tessera.op, tessera.stream, tessera.graph, tessera.autotune, tessera.domain,
tessera.array, tessera.index_launch, tessera.launch.
"""
import hashlib
import os

from . import _compile
from ._errors import CompileError, DTypeError, Error, ShapeError
from . import _tessera

_tessera._set_errors(Error, DTypeError, ShapeError)

from ._module import HostFunction, Module, load  # noqa: E402
from . import _module  # noqa: E402
from ._decorators import autodiff, ceil_div, jit, kernel, tile, tshared  # noqa: E402,F401

__version__ = "0.1.0"
Kernel = _tessera.Kernel
Stream = _tessera.Stream


def compile(path, *, gpu=None, target=None, bounds_check=None, include=(), opt=None, module_name=None, flags=(),
            force=False):
    """Compiles the module at `path` with tesserac and loads it (a Module: its kernels and host
    functions as attributes). Flags as tesserac's: gpu="sm_90a" (or a list), target="all" | "gpu" |
    "cpu" (default: both where a GPU driver exists, else the CPU executor's), bounds_check=True,
    include=[dirs], opt=0..3, flags=[other tesserac options]. Results are cached on disk
    ($TESSERA_CACHE_DIR/python, else ~/.cache/tessera/python) by source, imports, flags and compiler;
    force=True compiles again. A CompileError carries tesserac's diagnostics."""
    flags = _compile.compile_flags(gpu, target, bounds_check, include, opt, flags)
    source = os.path.abspath(path)
    if not os.path.exists(source):
        raise FileNotFoundError(f"tessera.compile: no such file: {path}")
    stem = module_name or _compile.module_stem(path)
    base = stem if module_name else f"{stem}_{hashlib.sha256(f'{source}|{flags}'.encode()).hexdigest()[:10]}"
    name, k = base, 0
    # Module names are unique in a process (the runtime's registry). A name in use is this build
    # again (the same source, imports and flags: return it), or an earlier build of a changed
    # source: the new build gets a name of its own.
    while _module.name_in_use(name) and not force:
        found = _compile.cached_lookup(source, name, flags)
        if found and os.path.realpath(os.path.join(found[0], "m.so")) == _module.name_in_use(name):
            return load(os.path.join(found[0], "m.so"))
        k += 1
        name = f"{base}_r{k}"
    entry, meta = _compile.cached_build(source, name, flags, force)
    return load(os.path.join(entry, "m.so"), os.path.join(entry, "m.h"), name, meta["source"], flags)


def compile_string(source, name="module", **kwargs):
    """tessera.compile of source text (a notebook cell): written once under the cache directory,
    named `name`, compiled with the same keywords and cache."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    d = os.path.join(_compile.cache_root(), "src", digest)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"{name}.tessera")
    if not os.path.exists(path):
        _compile._write_atomic(path, source)
    kwargs.setdefault("module_name", None)
    return compile(path, **kwargs)


def set_device(kind):
    """Runs Tessera on "cpu" (the CPU executor) or "gpu" in this process. Call it before the first
    call; by default the first call's tensors decide (TESSERA_DEVICE overrides both)."""
    _tessera.set_device(kind)


def device():
    """The device this process runs Tessera on: {"kind", "ordinal", "name", ...}."""
    return _tessera.device()


def synchronize():
    """Waits for all work of the runtime on the device (and reports a kernel fault of earlier
    work)."""
    _tessera.synchronize()


def index_launch(axis, mesh=None):
    """The spec's tessera.index_launch(axis="tp")(kernel)(A.parts("tp"), ...): every rank of the
    mesh launches the kernel on its parts (tessera.dist)."""
    from . import dist
    return dist.index_launch(axis, mesh)


def grad(f, argnums=0):
    """The spec's tessera.grad(loss_fn)(W, ...) from Python: the gradient of f's one-element result
    with respect to argument `argnums`, through torch.autograd (f computes with differentiable
    Tessera functions, @autodiff host functions and tessera.op, and PyTorch)."""

    def gradient(*args):
        import torch
        args = list(args)
        x = args[argnums].detach().requires_grad_()
        args[argnums] = x
        with torch.enable_grad():
            y = f(*args)
            if not isinstance(y, torch.Tensor) or y.numel() != 1:
                raise ValueError("tessera.grad: the function must return a one-element tensor (a loss)")
            (g,) = torch.autograd.grad(y.reshape(()), x)
        return g

    return gradient


def __getattr__(name):
    # The host API's submodules, imported on first use (tessera.dist, tessera.op, ...).
    import importlib
    if name in ("dist", "op", "stream", "graph", "autotune", "launch", "domain", "array", "torch"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'tessera' has no attribute '{name}'")
