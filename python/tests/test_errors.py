"""Misuse from Python raises the named exception with the runtime's message, and never crashes the
interpreter: None, wrong argument counts, a tensor where a scalar goes and the reverse, dtype and
shape mismatches, non-contiguous views where an entry point needs dense tensors, tensors on
another device, freed tensors, consumed capsules, kernel faults."""
import unittest

import numpy as np

import helpers
from helpers import needs_torch, torch

import tessera


def arrays(n=16, dtype=np.float32, seed=41):
    r = helpers.rng(seed)
    return r.standard_normal(n).astype(dtype), r.standard_normal(n).astype(dtype)


class Misuse(unittest.TestCase):
    def setUp(self):
        if helpers.device() != "cpu":
            self.skipTest("host arrays: CPU executor (the CUDA cases are in test_gpu.py)")
        self.m = helpers.module()

    def test_none_and_argument_counts(self):
        x, y = arrays()
        with self.assertRaisesRegex(TypeError, r"kernel 'saxpy': parameter 'x': expected a tensor, got None"):
            self.m.saxpy(None, y, 1.0)
        with self.assertRaisesRegex(TypeError, r"parameter 'alpha': expected a f32 scalar, got None"):
            self.m.saxpy(x, y, None)
        with self.assertRaisesRegex(TypeError, r"kernel 'saxpy' takes 3 arguments, got 2"):
            self.m.saxpy(x, y)
        with self.assertRaisesRegex(TypeError, r"kernel 'saxpy' takes 3 arguments, got 4"):
            self.m.saxpy(x, y, 1.0, 2.0)
        with self.assertRaisesRegex(TypeError, r"function 'mlp' takes 3 arguments, got 1"):
            self.m.mlp(x)
        with self.assertRaisesRegex(TypeError, r"has no parameter 'z'"):
            self.m.saxpy(x, y, z=1.0)

    def test_kind_mixups(self):
        x, y = arrays()
        with self.assertRaisesRegex(TypeError, r"parameter 'alpha': expected a f32 scalar, got a tensor"):
            self.m.saxpy(x, y, x)
        with self.assertRaisesRegex(TypeError, r"parameter 'x': expected a tensor, got a Python float"):
            self.m.saxpy(1.0, y, 1.0)
        with self.assertRaisesRegex(TypeError, r"parameter 'x': expected a tensor .* got str"):
            self.m.saxpy("x", y, 1.0)
        with self.assertRaisesRegex(ValueError, r"parameter 'k': 9223372036854775808 does not fit|does not fit in i64"):
            self.m.iadd(np.zeros(3, np.int32), np.zeros(3, np.int64), np.zeros(3, np.int64), 2**63)

    def test_dtype_mismatch_is_type_error(self):
        x, y = arrays(dtype=np.float64)
        with self.assertRaises(TypeError) as c:
            self.m.saxpy(x, y, 1.0)
        self.assertIsInstance(c.exception, tessera.DTypeError)
        self.assertIn("kernel 'saxpy': parameter 'x'", str(c.exception))
        self.assertEqual(c.exception.status, "TESSERA_ERROR_DTYPE_MISMATCH")

    def test_shape_mismatch_is_value_error(self):
        x, _ = arrays(16)
        _, y = arrays(17)
        with self.assertRaises(ValueError) as c:
            self.m.saxpy(x, y, 1.0)
        self.assertIsInstance(c.exception, tessera.ShapeError)
        self.assertIn("kernel 'saxpy'", str(c.exception))
        with self.assertRaises(ValueError):  # rank
            self.m.saxpy(np.zeros((4, 4), np.float32), np.zeros((4, 4), np.float32), 1.0)
        X = np.zeros((5, 7), np.float32)
        with self.assertRaises(tessera.ShapeError):  # an entry point: the first kernel that sees it
            self.m.mlp(X, np.zeros((6, 3), np.float32), np.zeros(3, np.float32))

    def test_aliased_mut(self):
        x, _ = arrays(64)
        with self.assertRaisesRegex(tessera.Error, r"kernel 'saxpy'.*overlap"):
            self.m.saxpy(x, x, 1.0)

    def test_other_device_and_bad_dlpack(self):
        x, y = arrays()
        cuda = helpers.Producer(x, device_type=2, device_id=1)
        with self.assertRaises(tessera.Error) as c:
            self.m.saxpy(cuda, y, 1.0)
        self.assertIn("kernel 'saxpy': parameter 'x': a CUDA tensor (cuda:1)", str(c.exception))
        with self.assertRaisesRegex(TypeError, r"DLPack device type 7"):
            self.m.saxpy(helpers.Producer(x, device_type=7), y, 1.0)
        with self.assertRaisesRegex(TypeError, r"DLPack dtype \(code 5"):
            self.m.saxpy(helpers.Producer(x, code=5, bits=64), y, 1.0)
        with self.assertRaisesRegex(ValueError, r"rank 9"):
            self.m.saxpy(helpers.Producer(x, shape=(1,) * 9, strides=(1,) * 9), y, 1.0)

    def test_freed_and_consumed(self):
        x, y = arrays()
        null = helpers.Producer(x, data=0)  # a freed tensor: no memory behind a non-empty shape
        with self.assertRaises(tessera.Error) as c:
            self.m.saxpy(null, y, 1.0)
        self.assertEqual(c.exception.status, "TESSERA_ERROR_NULL_POINTER")
        cap = helpers.Producer(y).__dlpack__()
        if torch is not None:
            torch.utils.dlpack.from_dlpack(cap)  # consumed by another framework
            with self.assertRaisesRegex(TypeError, r"already consumed"):
                self.m.saxpy(x, cap, 1.0)

    def test_kernel_fault_names_kernel_and_parameter(self):
        x, y = arrays(100)
        with self.assertRaises(tessera.Error) as c:
            self.m.shifted(x, y, 5)
        self.assertEqual(c.exception.status, "TESSERA_ERROR_KERNEL_FAULT")
        self.assertRegex(str(c.exception), r"kernel 'shifted'.*tensor 'x', dimension 0: index 10[0-4] is outside \[0, 100\)")
        self.m.shifted(x, y, 0)  # the runtime goes on after a reported CPU fault
        np.testing.assert_array_equal(y, x)


class TorchMisuse(unittest.TestCase):
    @needs_torch
    def test_freed_storage(self):
        m = helpers.module()
        x = torch.randn(32).to(helpers.device())
        y = torch.randn(32).to(helpers.device())
        storage = x.untyped_storage() if hasattr(x, "untyped_storage") else x.storage()
        storage.resize_(0)  # the tensor's memory is gone; its shape says 32
        with self.assertRaises((TypeError, tessera.Error)) as c:  # PyTorch refuses to export it
            m.saxpy(x, y, 1.0)
        self.assertIn("kernel 'saxpy': parameter 'x'", str(c.exception))

    @needs_torch
    def test_non_contiguous_entry_arguments(self):
        m = helpers.module()
        dev = helpers.device()
        wide = torch.randn(8, 12, dtype=torch.float64).to(dev)[:, ::2]
        S, T = m.two(wide)  # the kernels of this function read any strides
        self.assertTrue(torch.equal(T, wide * 3.0))
        self.assertTrue(torch.allclose(S, torch.softmax(wide, dim=1), rtol=1e-13, atol=1e-15))
        Q, K, V = (torch.randn(33, 16).to(dev) for _ in range(3))
        O = m.attn1(Q, K, V)
        bound = 1e-5 * (1 + (torch.softmax(Q @ K.T, dim=1) @ V).abs())
        self.assertTrue(bool(((O - torch.softmax(Q @ K.T, dim=1) @ V).abs() <= bound).all()))
        with self.assertRaises(tessera.Error) as c:  # the attention kernel views Q: it must be dense
            m.attn1(torch.randn(33, 32).to(dev)[:, ::2], K, V)
        self.assertEqual(c.exception.status, "TESSERA_ERROR_INVALID_ARGUMENT")
        self.assertRegex(str(c.exception), r"function 'attn1'.*parameter 'Q' is a strided view")

    @needs_torch
    def test_dtype_and_shape_torch(self):
        m = helpers.module()
        dev = helpers.device()
        with self.assertRaises(TypeError):
            m.saxpy(torch.zeros(4, dtype=torch.float64, device=dev), torch.zeros(4, device=dev), 1.0)
        with self.assertRaises(ValueError):
            m.saxpy(torch.zeros(4, device=dev), torch.zeros(5, device=dev), 1.0)


if __name__ == "__main__":
    unittest.main()
