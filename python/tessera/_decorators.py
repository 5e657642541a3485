"""@kernel, @jit, @autodiff and @graph.module on Python functions: the function's own source text
(the spec writes Tessera as Python) is compiled by tessera.compile_string as a module of that one
function, on first use, and the decorated name becomes the module's kernel or host function.

    from __future__ import annotations      # Tessera annotations (f32[n]) are not Python values
    from tessera import kernel

    @kernel
    def saxpy(x: f32[n], y: mut f32[n], alpha: f32):
        ...

Only the function's text is compiled: names it uses from the surrounding Python program do not
exist in Tessera (use a .tessera module and tessera.compile for programs of several functions).
"""
import functools
import inspect
import textwrap


class Deferred:
    """A Tessera function defined in Python, compiled at its first use (a call, an attribute)."""

    def __init__(self, fn, options=None):
        self.fn = fn
        self.options = dict(options or {})
        self._target = None
        functools.update_wrapper(self, fn)

    def _resolve(self):
        if self._target is None:
            from . import compile_string
            try:
                src = textwrap.dedent(inspect.getsource(self.fn))
            except (OSError, TypeError) as e:
                raise RuntimeError(f"tessera: the source of '{self.fn.__name__}' is not available ({e}); "
                                   "define it in a file, or use tessera.compile_string") from e
            mod = compile_string(src, name=self.fn.__name__, **self.options)
            name = self.fn.__name__
            self._target = mod.kernels.get(name) or mod.functions.get(name)
            if self._target is None:
                raise RuntimeError(f"tessera: compiling '{name}' gave no kernel or entry point of that name "
                                   "(tesserac's warnings say why)")
        return self._target

    def __call__(self, *args, **kwargs):
        return self._resolve()(*args, **kwargs)

    def __getitem__(self, key):
        return self._resolve()[key]

    def __getattr__(self, name):
        if name.startswith("__") or name in ("fn", "options", "_target"):
            raise AttributeError(name)
        return getattr(self._resolve(), name)

    def __repr__(self):
        return f"<tessera function '{self.fn.__name__}' ({'compiled' if self._target else 'not compiled yet'})>"


def _wrap(fn):
    return fn if isinstance(fn, Deferred) else Deferred(fn)


class _Decorator:
    """@name, @name(...) and @name.autotune(...) (and graph.module("name")): every form marks the
    function; the decorator lines are part of the source tesserac reads."""

    def __init__(self, name):
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return _wrap(args[0])
        return _wrap

    def autotune(self, **kwargs):
        return _wrap

    def __matmul__(self, other):
        # `@jit @autodiff` on one line (the spec writes it so) is one decorator expression to
        # Python: jit @ autodiff.
        return _wrap

    @staticmethod
    def inspect_ir(k, level="tile"):
        """The spec's kernel.inspect_ir: Tile IR ("tile") or target code ("target") of kernel k."""
        from ._inspect import inspect_ir
        return inspect_ir(k._resolve() if isinstance(k, Deferred) else k, level)

    def __repr__(self):
        return f"<tessera decorator @{self.__name__}>"


class _KernelCode:
    """tile, tshared, cp_async, launch's device side: Tessera kernel code, which runs inside
    @kernel functions compiled by tesserac, never in Python."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        raise RuntimeError(f"{self._name}.{attr} is Tessera kernel code: it runs inside @kernel functions "
                           "(compiled by tesserac), not in Python")


def ceil_div(a, b):
    """ceil(a / b) of integers, as in Tessera's extents."""
    return -((-a) // b)


kernel = _Decorator("kernel")
jit = _Decorator("jit")
autodiff = _Decorator("autodiff")
tile = _KernelCode("tile")
tshared = _KernelCode("tshared")
