"""A small transformer block in PyTorch whose attention and MLP are Tessera @autodiff functions
(transformer_block.tessera), trained for a few steps beside the same block written in PyTorch
alone, from the same initial weights and data, in bf16. The two loss curves must agree within bf16
tolerance: each step's losses within 1% of each other (2.5 bf16 ulps) (the bound is the rounding of bf16
activations and gradients through two residual branches, compounded over the steps).

    python3 examples/python/transformer_block.py [--steps N] [--device cpu|cuda]

On a GPU the Tessera functions run their bf16 forms (tensor-core products, the stdlib flash
attention); on the CPU executor the same graphs run their portable forms.
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

import tessera

HERE = os.path.dirname(os.path.abspath(__file__))


def rmsnorm(x, eps=1e-6):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)


def torch_attention(x, Wqkv, Wo, heads):
    S, E = x.shape
    q, k, v = (rmsnorm(x) @ Wqkv).split(E, dim=1)
    q, k, v = (t.reshape(S, heads, E // heads).transpose(0, 1) for t in (q, k, v))
    scores = (q @ k.transpose(1, 2)).float() * (E // heads) ** -0.5
    y = torch.softmax(scores, dim=-1).to(x.dtype) @ v
    return y.transpose(0, 1).reshape(S, E) @ Wo


def torch_mlp(x, W1, W2):
    return F.gelu(rmsnorm(x) @ W1, approximate="tanh") @ W2


class Block(torch.nn.Module):
    """x + attention(x), then h + mlp(h): the branches are Tessera's or PyTorch's."""

    def __init__(self, weights, tessera_module=None):
        super().__init__()
        self.Wqkv, self.Wo, self.W1, self.W2 = (torch.nn.Parameter(w.clone()) for w in weights)
        self.mod = tessera_module

    def forward(self, x):
        if self.mod is not None:
            h = x + self.mod.attention(x, self.Wqkv, self.Wo)
            return h + self.mod.mlp(h, self.W1, self.W2)
        h = x + torch_attention(x, self.Wqkv, self.Wo, heads=4)
        return h + torch_mlp(h, self.W1, self.W2)


def train(block, batches, targets, lr):
    opt = torch.optim.SGD(block.parameters(), lr=lr)
    losses = []
    for x, t in zip(batches, targets):
        opt.zero_grad()
        loss = (block(x).float() - t.float()).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--width", type=int, default=64)
    args = ap.parse_args()
    dev, S, E = args.device, args.seq, args.width
    tessera.set_device("gpu" if dev == "cuda" else "cpu")
    mod = tessera.compile(os.path.join(HERE, "transformer_block.tessera"))
    g = torch.Generator().manual_seed(2024)

    def rand(*shape, scale=1.0):
        return (torch.randn(*shape, generator=g) * scale).to(torch.bfloat16).to(dev)

    weights = (rand(E, 3 * E, scale=E ** -0.5), rand(E, E, scale=E ** -0.5), rand(E, 4 * E, scale=E ** -0.5),
               rand(4 * E, E, scale=(4 * E) ** -0.5))
    x, t = rand(S, E), rand(S, E)  # one batch, fitted step after step: the loss must go down
    batches, targets = [x] * args.steps, [t] * args.steps
    ours = train(Block(weights, mod).to(dev), batches, targets, lr=0.5)
    ref = train(Block(weights).to(dev), batches, targets, lr=0.5)
    worst = 0.0
    for i, (a, b) in enumerate(zip(ours, ref)):
        rel = abs(a - b) / abs(b)
        worst = max(worst, rel)
        print(f"step {i}: loss {a:.6f} (Tessera) {b:.6f} (PyTorch) relative difference {rel:.2e}")
    decreased = ours[-1] < ours[0]
    print(f"worst relative difference {worst:.2e} (bound 1e-2); loss {'decreased' if decreased else 'did not decrease'}")
    sys.exit(0 if worst <= 1e-2 and decreased else 1)


if __name__ == "__main__":
    main()
