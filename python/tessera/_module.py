"""A loaded Tessera module: its kernels (launched in place) and host functions (tensors in, new
tensors out), as attributes."""
import functools
import os
import sys

from . import _header
from . import _tessera
from . import _inspect

_FRAMEWORK_TORCH, _FRAMEWORK_NUMPY, _FRAMEWORK_OTHER = 1, 2, 3
_loaded = {}  # realpath of a shared object -> Module (a shared object is loaded once)
_names = {}  # registered module name -> realpath of the shared object that registered it


def _first_tensor(args):
    for a in args:
        if hasattr(a, "__dlpack__") or type(a).__name__ == "PyCapsule":
            return a
    return None


def to_framework(framework, buf, args):
    """A result Buffer as a tensor of the framework of the call's tensors."""
    if framework == _FRAMEWORK_TORCH or (framework == 0 and "torch" in sys.modules):
        import torch
        return torch.from_dlpack(buf)
    if framework == _FRAMEWORK_NUMPY or framework == 0:
        import numpy
        if buf.dtype in ("bf16", "fp8_e4m3", "fp8_e5m2"):
            raise TypeError(f"NumPy has no {buf.dtype}: call the function on PyTorch tensors to get such results")
        # The buffer protocol: a writable array (NumPy's DLPack imports are read-only before
        # NumPy 2) that owns the result through its base, zero-copy.
        return numpy.asarray(buf)
    first = _first_tensor(args)
    root = sys.modules.get(type(first).__module__.split(".")[0]) if first is not None else None
    from_dlpack = getattr(root, "from_dlpack", None)
    return from_dlpack(buf) if from_dlpack else buf


class HostFunction:
    """A host function (@jit, @graph.module) of a module: `f(tensors..., scalars...)` returns its
    results as new tensors of the framework of the arguments (a tuple when there are several, None
    when there are none). `f.backward` is the @autodiff backward entry: the function's arguments,
    then one cotangent per result, returning the gradients of the floating-point tensor
    parameters. On PyTorch tensors that require grad, an @autodiff function records itself on the
    autograd tape (forward and backward entries as one autograd.Function)."""

    def __init__(self, module, decl, entry):
        self.module = module
        self.decl = decl
        self._entry = entry
        self.backward = None  # the backward HostFunction of an @autodiff function
        self.__name__ = decl.name
        self.__doc__ = f"{decl.signature}\n\n{HostFunction.__doc__}"

    @property
    def signature(self):
        return self.decl.signature

    @property
    def params(self):
        return self.decl.params

    def result_shapes(self, *shapes):
        """The shapes of the results for arguments of `shapes` (the graph's shape rules)."""
        return _header.result_shapes(self.decl, shapes)

    def call_raw(self, *args, stream=None):
        """The results, converted to the arguments' framework, always as a list."""
        framework, bufs = self._entry(*args, stream=stream)
        return [to_framework(framework, b, args) for b in bufs]

    def __call__(self, *args, stream=None):
        if self.backward is not None and "torch" in sys.modules:
            from . import torch as tt
            if tt.needs_grad(args):
                return tt.apply(self, args)
        out = self.call_raw(*args, stream=stream)
        return out[0] if len(out) == 1 else (tuple(out) if out else None)

    def __repr__(self):
        return f"<tessera host function {self.decl.signature}>"


class Module:
    """The kernels and host functions of one compiled module, as attributes."""

    def __init__(self, so_path, header_path, module_name=None, source=None, flags=()):
        self.path = os.path.realpath(so_path)
        self.source = source
        self.flags = list(flags)
        with open(header_path) as f:
            text = f.read()
        self.header = _header.parse_header(text)
        self.name = module_name or self.header.prefix
        self._lib = _tessera.load_library(self.path)
        self.kernels, self.functions = {}, {}
        for k in self.header.kernels:
            desc = _tessera.find_kernel(self.name, k.name, self.path)
            kern = _tessera.Kernel(desc, self)
            kern.module = self
            kern.__name__ = k.name
            kern.signature = k.signature
            kern.inspect_ir = functools.partial(_inspect.inspect_ir, kern)
            self.kernels[k.name] = kern
        for e in self.header.entries:
            addr = _tessera.symbol(self._lib, e.symbol)
            params = [(p.name, p.kind, p.type.dtype if p.type else "", p.rank) for p in e.params]
            ranks = [len(r.shape) if isinstance(r, _header.TensorType) else -1 for r in e.results]
            entry = _tessera.HostEntry(addr, e.name, params, ranks, self)
            self.functions[e.name] = HostFunction(self, e, entry)
        for name, f in self.functions.items():
            if name.endswith("_backward") and name[: -len("_backward")] in self.functions:
                self.functions[name[: -len("_backward")]].backward = f

    def __getattr__(self, name):
        d = self.__dict__
        if "functions" in d and name in d["functions"]:
            return d["functions"][name]
        if "kernels" in d and name in d["kernels"]:
            return d["kernels"][name]
        raise AttributeError(f"Tessera module '{d.get('name', '?')}' has no kernel or host function '{name}'")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.kernels) | set(self.functions))

    def __repr__(self):
        user = [k for k in self.kernels if "__k" not in k]
        return (f"<tessera module '{self.name}' from {self.path}: kernels {user}, "
                f"host functions {sorted(self.functions)}>")


def load(path, header=None, module_name=None, source=None, flags=()):
    """Loads a module built ahead of time: `path` is a shared object linked against the package's
    libtessera_pyrt.so (tessera.compile makes them; docs/python.md shows the commands), `header`
    its generated header (default: the same path with .h). A shared object is loaded once per
    process; module names are unique in a process."""
    real = os.path.realpath(path)
    if real in _loaded:
        return _loaded[real]
    if not os.path.exists(real):
        raise FileNotFoundError(f"tessera.load: no such file: {path}")
    header = header or os.path.splitext(path)[0] + ".h"
    if not os.path.exists(header):
        raise FileNotFoundError(f"tessera.load: the module's header {header} is missing (tesserac -H writes it; "
                                "pass header=)")
    mod = Module(real, header, module_name, source, flags)
    _loaded[real] = mod
    _names[mod.name] = real
    return mod


def name_in_use(name):
    """The shared object that registered module `name` in this process, or None."""
    return _names.get(name)
