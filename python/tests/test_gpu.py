"""The GPU half of the package's tests (TESSERA_DEVICE=gpu, PyTorch CUDA tensors; skipped without
a GPU): launches and host functions ordered on PyTorch's current stream, a non-default one too
(the test fails when they are not: the work before them on the stream is a long sleep), results
allocated on that stream, CPU tensors refused naming the parameter, torch.compile of a function
calling a Tessera op with no graph break (PyTorch 2.4+), and gradcheck on CUDA tensors."""
import os
import unittest

import helpers
from helpers import torch

import tessera

GPU = torch is not None and torch.cuda.is_available() and os.environ.get("TESSERA_DEVICE") == "gpu"


def gpu_only(test):
    return unittest.skipIf(not GPU, "needs a GPU, PyTorch with CUDA and TESSERA_DEVICE=gpu")(test)


class StreamOrder(unittest.TestCase):
    @gpu_only
    def test_kernel_on_non_default_stream(self):
        m = helpers.module()
        n = 1 << 22
        x = torch.zeros(n, device="cuda")
        y = torch.zeros(n, device="cuda")
        torch.cuda.synchronize()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            torch.cuda._sleep(200_000_000)  # ~0.1 s of work ahead of the launches on s
            x.fill_(1.0)  # only then does x hold ones
            for _ in range(3):
                m.saxpy(x, y, 2.0)  # must run after the fill: on s
            z = y * 1.0  # and this after them
        s.synchronize()
        self.assertTrue(bool((z == 6.0).all()), "a launch ran out of order with the stream's work")

    @gpu_only
    def test_host_function_on_non_default_stream(self):
        m = helpers.module()
        X = torch.zeros(512, 256, device="cuda")
        W = torch.eye(256, device="cuda")
        b = torch.zeros(256, device="cuda")
        torch.cuda.synchronize()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            torch.cuda._sleep(200_000_000)
            X.fill_(3.0)
            Y = m.mlp(X, W, b)  # result allocated stream-ordered on s
            Z = Y + 1.0
        s.synchronize()
        self.assertTrue(bool((Z == 4.0).all()), "a host function ran out of order with the stream's work")

    @gpu_only
    def test_explicit_tessera_stream_and_capture(self):
        m = helpers.module()
        x = torch.randn(10000, device="cuda")
        y = torch.zeros(10000, device="cuda")
        st = tessera.stream.new()
        with tessera.stream.use(st):
            m.saxpy(x, y, 1.0)
        st.synchronize()
        self.assertTrue(torch.equal(y, x))
        with tessera.graph.capture() as g:
            m.saxpy(x, y, 1.0)
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(y, x), "captured, not run")
        tessera.graph.launch(g)
        tessera.synchronize()
        self.assertTrue(torch.equal(y, 2 * x))

    @gpu_only
    def test_cpu_tensor_on_gpu_process(self):
        m = helpers.module()
        with self.assertRaises(tessera.Error) as c:
            m.saxpy(torch.zeros(8), torch.zeros(8, device="cuda"), 1.0)
        self.assertEqual(c.exception.status, "TESSERA_ERROR_HOST_POINTER")
        self.assertIn("kernel 'saxpy': parameter 'x': a CPU tensor", str(c.exception))


class Compile(unittest.TestCase):
    @gpu_only
    def test_torch_compile_no_graph_break(self):
        import tessera.torch as tt
        if not tt.has_custom_ops():
            self.skipTest(f"torch.library.custom_op needs PyTorch 2.4+, this is {torch.__version__}")
        m = helpers.module()
        f = tt.op(m.layer)
        g = torch.Generator().manual_seed(91)
        X, W, b = (torch.randn(*s, dtype=torch.float64, generator=g).cuda().requires_grad_()
                   for s in ((16, 8), (8, 4), (4,)))

        def step(X, W, b):
            return (torch.tanh(f(X, W, b)) * 2).sum()

        import torch._dynamo as dynamo
        explained = dynamo.explain(step)(X, W, b)
        self.assertEqual(explained.graph_break_count, 0, explained.break_reasons)
        out = torch.compile(step, fullgraph=True)(X, W, b)
        out.backward()
        ref = (torch.tanh(torch.nn.functional.gelu(X.detach() @ W.detach() + b.detach(), approximate="tanh")) * 2).sum()
        self.assertTrue(torch.allclose(out.detach(), ref, rtol=1e-12))
        self.assertEqual(X.grad.shape, X.shape)


if __name__ == "__main__":
    unittest.main()
