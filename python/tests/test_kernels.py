"""Kernels called from Python on NumPy arrays and PyTorch tensors, in place, every element checked
against a reference computed here on fresh random inputs (odd sizes, views, every dtype the
frameworks have). On the GPU (TESSERA_DEVICE=gpu) the PyTorch tests run on CUDA tensors."""
import unittest

import numpy as np

import helpers
from helpers import needs_torch, torch

import tessera


def cpu_only(test):
    return unittest.skipIf(helpers.device() != "cpu", "NumPy arrays are host memory: CPU executor only")(test)


class NumPyKernels(unittest.TestCase):
    @cpu_only
    def test_saxpy_every_element(self):
        m = helpers.module()
        for n, seed in ((1, 1), (257, 2), (10007, 3)):
            r = helpers.rng(seed)
            x = r.standard_normal(n, dtype=np.float32)
            y = r.standard_normal(n, dtype=np.float32)
            want = (np.float32(1.75) * x + y).astype(np.float32)
            m.saxpy(x, y, 1.75)
            np.testing.assert_array_equal(y, want)

    @cpu_only
    def test_views_and_transposes(self):
        m = helpers.module()
        r = helpers.rng(4)
        big = r.standard_normal((37, 61))
        A = big[3:30:2, 5:58:3]  # strided in both dimensions
        B = r.standard_normal((A.shape[1], A.shape[0])).T  # a transposed view
        C = np.zeros(A.shape)
        m.axpb(A, B, C)
        np.testing.assert_array_equal(C, A + B * 2.0)
        Cv = np.zeros((A.shape[0], A.shape[1] * 2))[:, ::2]  # the result into a strided view
        m.axpb(A, B, Cv)
        np.testing.assert_array_equal(Cv, A + B * 2.0)

    @cpu_only
    def test_negative_strides_and_readonly(self):
        m = helpers.module()
        r = helpers.rng(5)
        x = r.standard_normal(101, dtype=np.float32)[::-1]
        x.setflags(write=False)  # read-only: NumPy refuses DLPack, the buffer protocol reads it
        y = r.standard_normal(101, dtype=np.float32)
        want = (np.float32(-0.5) * x + y).astype(np.float32)
        m.saxpy(x, y, -0.5)
        np.testing.assert_array_equal(y, want)

    @cpu_only
    def test_f16_scalar_integers_bools(self):
        m = helpers.module()
        r = helpers.rng(6)
        x = r.standard_normal(333).astype(np.float16)
        y = np.zeros_like(x)
        m.hscale(x, y, 0.3)
        np.testing.assert_array_equal(y, (np.float16(0.3) * x).astype(np.float16))
        a = r.integers(-2**31, 2**31 - 1, 77, dtype=np.int32)
        b = r.integers(-2**40, 2**40, 77, dtype=np.int64)
        c = np.zeros(77, dtype=np.int64)
        m.iadd(a, b, c, -3)
        np.testing.assert_array_equal(c, a.astype(np.int64) + b * -3)
        mask = r.integers(0, 2, 55).astype(bool)
        xs = r.standard_normal(55, dtype=np.float32)
        ys = np.zeros_like(xs)
        m.select(mask, xs, ys)
        np.testing.assert_array_equal(ys, np.where(mask, xs, -xs))

    @cpu_only
    def test_any_dlpack_producer(self):
        m = helpers.module()
        r = helpers.rng(7)
        x = r.standard_normal(64, dtype=np.float32)
        y = r.standard_normal(64, dtype=np.float32)
        want = (np.float32(2) * x + y).astype(np.float32)
        m.saxpy(helpers.Producer(x), helpers.Producer(y), 2.0)  # a producer that is no framework
        np.testing.assert_array_equal(y, want)
        producer = helpers.Producer(y)
        cap = producer.__dlpack__()  # a bare capsule: borrowed, usable again
        m.saxpy(x, cap, 1.0)
        m.saxpy(x, cap, 1.0)
        np.testing.assert_array_equal(y, want + x + x)

    @cpu_only
    def test_keywords_and_explicit_grid(self):
        m = helpers.module()
        r = helpers.rng(8)
        x = r.standard_normal(1000, dtype=np.float32)
        y = np.zeros(1000, dtype=np.float32)
        m.saxpy(alpha=1.0, y=y, x=x)
        np.testing.assert_array_equal(y, x)
        z = np.zeros(1000, dtype=np.float32)
        m.saxpy[(4,), (256,)](x, z, 2.0)  # 4 groups of 256 tiles cover 1000 elements
        np.testing.assert_array_equal(z, 2 * x)
        w = np.zeros(1000, dtype=np.float32)
        tessera.launch.grid(blocks=(8,), threads=(128,))(m.saxpy)(x, w, 3.0)
        np.testing.assert_array_equal(w, (np.float32(3) * x).astype(np.float32))


class TorchKernels(unittest.TestCase):
    @needs_torch
    def test_saxpy_every_element(self):
        m = helpers.module()
        dev = helpers.device()
        g = torch.Generator().manual_seed(11)
        for n in (1, 129, 65537):
            x = torch.randn(n, generator=g).to(dev)
            y = torch.randn(n, generator=g).to(dev)
            want = (2.5 * x + y).cpu()
            m.saxpy(x, y, 2.5)
            self.assertTrue(torch.equal(y.cpu(), want))

    @needs_torch
    def test_views_and_dtypes(self):
        m = helpers.module()
        dev = helpers.device()
        g = torch.Generator().manual_seed(12)
        base = torch.randn(40, 70, dtype=torch.float64, generator=g).to(dev)
        A = base[1:39:3, 2:67:2]
        B = torch.randn(A.shape[1], A.shape[0], dtype=torch.float64, generator=g).to(dev).t()
        C = torch.empty(A.shape, dtype=torch.float64, device=dev)
        m.axpb(A, B, C)
        self.assertTrue(torch.equal(C.cpu(), (A + B * 2.0).cpu()))
        xb = torch.randn(999, generator=g).to(torch.bfloat16).to(dev)
        yb = torch.empty_like(xb)
        m.bscale(xb, yb, 0.75)
        self.assertTrue(torch.equal(yb.cpu(), (0.75 * xb.float()).to(torch.bfloat16).cpu()))
        xh = torch.randn(500, generator=g).to(torch.float16).to(dev)
        yh = torch.empty_like(xh)
        m.hscale(xh, yh, 1.5)
        self.assertTrue(torch.equal(yh.cpu(), (torch.tensor(1.5, dtype=torch.float16) * xh.cpu())))

    @needs_torch
    def test_bool_and_int_tensors(self):
        m = helpers.module()
        dev = helpers.device()
        g = torch.Generator().manual_seed(13)
        mask = (torch.rand(300, generator=g) > 0.5).to(dev)
        x = torch.randn(300, generator=g).to(dev)
        y = torch.empty_like(x)
        m.select(mask, x, y)
        self.assertTrue(torch.equal(y.cpu(), torch.where(mask, x, -x).cpu()))
        a = torch.randint(-1000, 1000, (71,), generator=g, dtype=torch.int32).to(dev)
        b = torch.randint(-10**12, 10**12, (71,), generator=g, dtype=torch.int64).to(dev)
        c = torch.empty(71, dtype=torch.int64, device=dev)
        m.iadd(a, b, c, 7)
        self.assertTrue(torch.equal(c.cpu(), (a.to(torch.int64) + b * 7).cpu()))


if __name__ == "__main__":
    unittest.main()
