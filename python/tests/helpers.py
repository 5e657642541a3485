"""Shared by the package's tests: the test modules, fresh random inputs, and a hand-made DLPack
producer (any framework's export, including ones no framework here makes: another device, odd
strides, bad dtypes)."""
import ctypes
import os
import unittest

import numpy as np

import tessera

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
_modules = {}

try:
    import torch
except ImportError:  # the NumPy tests still run
    torch = None


def module(name="pykernels", **flags):
    """A test module, compiled once per process (with bounds checks: a stray index faults)."""
    key = (name, tuple(sorted(flags.items())))
    if key not in _modules:
        path = os.path.join(HERE, "kernels", f"{name}.tessera")
        if not os.path.exists(path):
            path = os.path.join(ROOT, name)
        flags.setdefault("bounds_check", True)
        _modules[key] = tessera.compile(path, **flags)
    return _modules[key]


def on_gpu():
    return tessera.device()["kind"] == "gpu"


def rng(seed):
    return np.random.default_rng(seed)


def needs_torch(test):
    return unittest.skipIf(torch is None, "PyTorch is not installed for this interpreter")(test)


def device():
    """The torch device the tests run on: cuda when the process runs Tessera on the GPU."""
    return "cuda" if torch is not None and os.environ.get("TESSERA_DEVICE") == "gpu" else "cpu"


# A DLPack producer made with ctypes: exports any (data, device, dtype, shape, strides).
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManaged(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class Producer:
    """A DLPack producer over memory `owner` keeps alive (a NumPy array by default): the test
    chooses what the capsule says. Its deleter is NULL (the producer owns everything)."""

    def __init__(self, owner, device_type=1, device_id=0, code=None, bits=None, shape=None, strides=None,
                 data=None, byte_offset=0):
        self.owner = owner
        a = owner if isinstance(owner, np.ndarray) else None
        shape = tuple(a.shape) if shape is None else tuple(shape)
        if strides is None and a is not None:
            strides = tuple(s // a.itemsize for s in a.strides)
        kinds = {"f": 2, "i": 0, "u": 1, "b": 6}
        self._shape = (ctypes.c_int64 * max(1, len(shape)))(*shape)
        self._strides = (ctypes.c_int64 * max(1, len(shape)))(*strides) if strides is not None else None
        self._m = _DLManaged()
        t = self._m.dl_tensor
        t.data = data if data is not None else (a.ctypes.data if a is not None else None)
        t.device = _DLDevice(device_type, device_id)
        t.ndim = len(shape)
        t.dtype = _DLDataType(kinds[a.dtype.kind] if code is None else code, a.itemsize * 8 if bits is None else bits, 1)
        t.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64)) if self._strides else None
        t.byte_offset = byte_offset

    def __dlpack__(self, stream=None):
        return _capsule_new(ctypes.addressof(self._m), b"dltensor", None)

    def __dlpack_device__(self):
        return (self._m.dl_tensor.device.device_type, self._m.dl_tensor.device.device_id)
