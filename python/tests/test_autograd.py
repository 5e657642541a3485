"""@autodiff host functions in torch.autograd: gradcheck in float64 (central differences of the
forward entry against the backward entry), gradients against PyTorch's own autograd of the same
function, and with PyTorch 2.4 and later the custom op under torch.compile without a graph
break."""
import unittest

import helpers
from helpers import torch

import tessera

if torch is not None:
    import tessera.torch as tt
    from torch.autograd import gradcheck


def needs_torch(test):
    return unittest.skipIf(torch is None, "PyTorch is not installed for this interpreter")(test)


def needs_custom_ops(test):
    reason = "torch.library.custom_op (fake-tensor functions, torch.compile) needs PyTorch 2.4 or later; " \
             f"this is {getattr(torch, '__version__', 'absent')}"
    return unittest.skipIf(torch is None or not tt.has_custom_ops(), reason)(test)


def inputs(seed, *shapes):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*s, dtype=torch.float64, generator=g).to(helpers.device()).requires_grad_() for s in shapes]


class Autograd(unittest.TestCase):
    @needs_torch
    def test_gradcheck_layer(self):
        m = helpers.module()
        X, W, b = inputs(51, (5, 4), (4, 3), (3,))
        self.assertTrue(gradcheck(m.layer, (X, W, b), eps=1e-6, atol=1e-7, rtol=1e-6))

    @needs_torch
    def test_gradcheck_attention(self):
        m = helpers.module()
        Q, K, V = inputs(52, (4, 3), (6, 3), (6, 2))
        self.assertTrue(gradcheck(m.attention, (Q, K, V), eps=1e-6, atol=1e-7, rtol=1e-6))

    @needs_torch
    def test_against_torch_autograd(self):
        m = helpers.module()
        X, W, b = inputs(53, (9, 7), (7, 5), (5,))
        y = m.layer(X, W, b)
        loss = (y * y).sum()
        loss.backward()
        got = [t.grad.clone() for t in (X, W, b)]
        X2, W2, b2 = [t.detach().clone().requires_grad_() for t in (X, W, b)]
        ref = torch.nn.functional.gelu(X2 @ W2 + b2, approximate="tanh")  # Tessera's gelu
        self.assertTrue(torch.allclose(y, ref, rtol=1e-12, atol=1e-14))
        (ref * ref).sum().backward()
        for g, r in zip(got, (X2.grad, W2.grad, b2.grad)):
            self.assertTrue(torch.allclose(g, r, rtol=1e-10, atol=1e-12), (g - r).abs().max())

    @needs_torch
    def test_backward_entry_directly(self):
        m = helpers.module()
        X, W, b = [t.detach() for t in inputs(54, (3, 2), (2, 4), (4,))]
        d = torch.ones(3, 4, dtype=torch.float64, device=X.device)
        gX, gW, gb = m.layer.backward(X, W, b, d)
        self.assertEqual((gX.shape, gW.shape, gb.shape), ((3, 2), (2, 4), (4,)))
        self.assertIs(m.mlp.backward, None)  # not @autodiff

    @needs_torch
    def test_op_without_custom_ops(self):
        m = helpers.module()
        f = tt.op(m.layer)
        X, W, b = inputs(55, (4, 3), (3, 2), (2,))
        y = f(X, W, b)
        y.sum().backward()
        self.assertEqual(X.grad.shape, (4, 3))

    @needs_custom_ops
    def test_custom_op_fake_shapes_and_compile(self):
        m = helpers.module()
        f = tt.op(m.layer)
        X, W, b = inputs(56, (6, 5), (5, 3), (3,))
        from torch._subclasses.fake_tensor import FakeTensorMode
        mode = FakeTensorMode()
        fakes = [mode.from_tensor(t.detach()) for t in (X, W, b)]
        with mode:
            fake = f(*fakes)
        self.assertEqual(tuple(fake.shape), (6, 3))

        def step(X, W, b):
            return torch.tanh(f(X, W, b)).sum()

        import torch._dynamo as dynamo
        explained = dynamo.explain(step)(X, W, b)
        self.assertEqual(explained.graph_break_count, 0, explained.break_reasons)
        compiled = torch.compile(step, fullgraph=True)
        got = compiled(X, W, b)
        got.backward()
        ref = torch.tanh(torch.nn.functional.gelu(X.detach() @ W.detach() + b.detach(), approximate="tanh")).sum()
        self.assertTrue(torch.allclose(got.detach(), ref, rtol=1e-12))
        self.assertEqual(W.grad.shape, (5, 3))


class Ops(unittest.TestCase):
    @needs_torch
    def test_op_matmul_softmax_differentiable(self):
        dev = helpers.device()
        g = torch.Generator().manual_seed(57)
        A = torch.randn(7, 5, dtype=torch.float64, generator=g).to(dev).requires_grad_()
        B = torch.randn(5, 3, dtype=torch.float64, generator=g).to(dev).requires_grad_()
        Y = tessera.op.softmax(tessera.op.matmul(A, B, tile_shape=(128, 128, 64)))
        ref = torch.softmax(A.detach() @ B.detach(), dim=1)
        self.assertTrue(torch.allclose(Y, ref, rtol=1e-12, atol=1e-15))
        Y.pow(2).sum().backward()
        A2, B2 = A.detach().clone().requires_grad_(), B.detach().clone().requires_grad_()
        torch.softmax(A2 @ B2, dim=1).pow(2).sum().backward()
        self.assertTrue(torch.allclose(A.grad, A2.grad, rtol=1e-10, atol=1e-13))
        self.assertTrue(torch.allclose(B.grad, B2.grad, rtol=1e-10, atol=1e-13))


if __name__ == "__main__":
    unittest.main()
