"""Host functions (@jit entries) from Python: new tensors out, in the framework of the arguments,
every element checked against float64 references on fresh random inputs at odd sizes."""
import unittest

import numpy as np

import helpers
from helpers import needs_torch, torch


def relu_mlp(X, W, b):
    return np.maximum(X.astype(np.float64) @ W.astype(np.float64) + b, 0.0)


def softmax(X):
    e = np.exp(X - X.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


class NumPyHost(unittest.TestCase):
    def setUp(self):
        if helpers.device() != "cpu":
            self.skipTest("NumPy arrays are host memory: CPU executor only")

    def test_mlp_every_element(self):
        m = helpers.module()
        r = helpers.rng(21)
        X = r.standard_normal((37, 23), dtype=np.float32)
        W = r.standard_normal((23, 19), dtype=np.float32)
        b = r.standard_normal(19, dtype=np.float32)
        Y = m.mlp(X, W, b)
        self.assertIsInstance(Y, np.ndarray)
        self.assertEqual(Y.shape, (37, 19))
        self.assertEqual(Y.dtype, np.float32)
        ref = relu_mlp(X, W, b)
        # f32 products of 23 terms: the sum's rounding, bounded by K * eps * sum|x w|.
        bound = 23 * 2.0**-23 * (np.abs(X).astype(np.float64) @ np.abs(W) + np.abs(b)) + 1e-30
        self.assertTrue(np.all(np.abs(Y - ref) <= bound), np.max(np.abs(Y - ref) - bound))

    def test_two_results_and_scalars(self):
        m = helpers.module()
        r = helpers.rng(22)
        X = r.standard_normal((13, 29))
        S, T = m.two(X)
        np.testing.assert_allclose(S, softmax(X), rtol=1e-13, atol=1e-15)
        np.testing.assert_array_equal(T, X * 3.0)
        x = r.standard_normal(1001, dtype=np.float32)
        np.testing.assert_array_equal(m.scaled(x, -1.25), (x * np.float32(-1.25)).astype(np.float32))

    def test_rank0_result_and_write_parameter(self):
        m = helpers.module()
        r = helpers.rng(23)
        X = r.standard_normal((17, 9))
        t = m.total(X)
        self.assertEqual(t.shape, ())
        self.assertAlmostEqual(float(t), float((X * X).sum()), delta=1e-12 * float((X * X).sum()))
        Y = r.standard_normal(333, dtype=np.float32)
        Xs = r.standard_normal(333, dtype=np.float32)
        want = (Y + np.float32(2) * Xs).astype(np.float32)
        self.assertIsNone(m.update(Y, Xs))  # writes Y in place, returns nothing
        np.testing.assert_array_equal(Y, want)

    def test_results_are_owned_and_independent(self):
        m = helpers.module()
        r = helpers.rng(24)
        X = r.standard_normal((5, 7))
        outs = [m.two(X)[1] for _ in range(50)]  # many results alive at once, then freed
        for o in outs:
            np.testing.assert_array_equal(o, X * 3.0)
        outs[0][:] = 0
        np.testing.assert_array_equal(outs[1], X * 3.0)


class TorchHost(unittest.TestCase):
    @needs_torch
    def test_mlp_and_two(self):
        m = helpers.module()
        dev = helpers.device()
        g = torch.Generator().manual_seed(31)
        X = torch.randn(41, 31, generator=g).to(dev)
        W = torch.randn(31, 17, generator=g).to(dev)
        b = torch.randn(17, generator=g).to(dev)
        Y = m.mlp(X, W, b)
        self.assertIsInstance(Y, torch.Tensor)
        self.assertEqual(Y.device.type, dev)
        ref = torch.relu(X.double() @ W.double() + b.double())
        bound = 31 * 2.0**-23 * (X.double().abs() @ W.double().abs() + b.double().abs())
        self.assertTrue(bool(((Y.double() - ref).abs() <= bound).all()))
        Xd = torch.randn(11, 7, dtype=torch.float64, generator=g).to(dev)
        S, T = m.two(Xd)
        self.assertTrue(torch.allclose(S, torch.softmax(Xd, dim=1), rtol=1e-13, atol=1e-15))
        self.assertTrue(torch.equal(T, Xd * 3.0))

    @needs_torch
    def test_rank0(self):
        m = helpers.module()
        X = torch.randn(6, 5, dtype=torch.float64).to(helpers.device())
        t = m.total(X)
        self.assertEqual(tuple(t.shape), ())
        self.assertTrue(abs(float(t) - float((X * X).sum())) <= 1e-12 * float((X * X).sum()))


if __name__ == "__main__":
    unittest.main()
