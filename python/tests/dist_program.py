"""tessera.dist from Python, run by every rank (mpirun -n N with CPU ranks in CI; one process, or
a world of one GPU on the device): a mesh, the deterministic collectives on PyTorch tensors
(NumPy without PyTorch) checked element by element and bit for bit against the fixed order, a
distributed tensor whose shard is a framework view, and the spec's index launch of tp_gemm
(examples/dist) checked against a float64 product. Prints "rank R: ok" and exits 0, or raises."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import helpers  # noqa: E402
import tessera  # noqa: E402
from tessera import dist, op  # noqa: E402

torch = helpers.torch


def tree_sum(values):
    """The runtime's binary-tree order (docs/abi.md 9.3): split at the largest power of two below n."""
    n = len(values)
    if n == 1:
        return values[0]
    half = 1
    while half * 2 < n:
        half *= 2
    return tree_sum(values[:half]) + tree_sum(values[half:])


def as_np(t):
    return t.detach().cpu().numpy() if torch is not None and isinstance(t, torch.Tensor) else np.asarray(t)


def make(values, dev):
    return torch.from_numpy(values).to(dev) if torch is not None else values


def check_collectives(mesh, rank, world, dev):
    # Every rank knows every rank's values (seeded by rank), so each checks the whole result.
    vals = [helpers.rng(100 + r).standard_normal(1031).astype(np.float32) for r in range(world)]
    got = as_np(op.all_reduce(make(vals[rank], dev), op="sum", axis="dp", name="grads"))
    want = tree_sum(vals)  # float32 arithmetic in the runtime's order: the same bits
    assert got.dtype == np.float32 and np.array_equal(got.view(np.uint32), want.view(np.uint32)), "all_reduce bits"
    seq = as_np(op.all_reduce(make(vals[rank], dev), mesh=mesh, algo="sequential"))
    acc = vals[0].copy()
    for v in vals[1:]:
        acc = acc + v
    assert np.array_equal(seq.view(np.uint32), acc.view(np.uint32)), "sequential all_reduce bits"
    mx = as_np(op.all_reduce(make(vals[rank], dev), op="max", axis="dp"))
    assert np.array_equal(mx, np.max(np.stack(vals), axis=0)), "max"
    blocks = [helpers.rng(200 + r).standard_normal((world * 3, 5)).astype(np.float32) for r in range(world)]
    rs = as_np(op.reduce_scatter(make(blocks[rank], dev), op="sum", axis="dp"))
    assert rs.shape == (3, 5) and np.array_equal(rs, tree_sum(blocks)[3 * rank:3 * rank + 3]), "reduce_scatter"
    ag = as_np(op.all_gather(make(vals[rank][:7].copy(), dev), axis="dp"))
    assert np.array_equal(ag, np.concatenate([v[:7] for v in vals])), "all_gather"


def check_index_launch(rank, world, dev):
    tp = world
    mesh = dist.Mesh(axes=["dp", "tp"], shape=(1, tp))
    M, K, N = 19, 7 * tp, 11
    a = helpers.rng(300).uniform(-2, 2, (M, K)).astype(np.float16)
    b = helpers.rng(301).uniform(-2, 2, (K, N)).astype(np.float16)
    A = dist.tensor(shape=(M, K), layout=dist.ShardSpec(partition=("col",), mesh_axes=("tp",)), mesh=mesh,
                    dtype="f16", name="A")
    B = dist.tensor(shape=(K, N), layout=dist.ShardSpec(partition=("row",), mesh_axes=("tp",)), mesh=mesh,
                    dtype="f16", name="B")
    k0 = A.offset[1]
    local_a, local_b = A.local, B.local  # views of the shards: writing them fills the distributed tensors
    local_a[...] = make(a[:, k0:k0 + K // tp].copy(), local_a.device if torch is not None else "cpu")
    local_b[...] = make(b[k0:k0 + K // tp].copy(), local_b.device if torch is not None else "cpu")
    P = make(np.zeros((M, N), np.float32), dev)
    mod = tessera.compile(os.path.join(helpers.ROOT, "examples", "dist", "tp_gemm.tessera"))
    tessera.index_launch(axis="tp")(mod.tp_gemm)(A.parts("tp"), B.parts("tp"), P)
    full = as_np(op.all_reduce(P, axis="tp", mesh=mesh))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # f32 sums of K products of f16 values (exact in f32): bounded by K * 2^-24 * sum |a||b|.
    bound = K * 2.0**-24 * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)) + 1e-30
    assert np.all(np.abs(full - ref) <= bound), np.max(np.abs(full - ref) - bound)
    try:
        mod.tp_gemm(A.local, B.local, P)
        raise AssertionError("a plain launch of tp_gemm must fail: K is not bound")
    except tessera.Error as e:
        assert "not bound" in str(e), str(e)


def main():
    info = dist.info()
    rank, world = info["rank"], info["world_size"]
    dev = "cuda" if info["device"] == "gpu" else "cpu"
    mesh = dist.Mesh(axes=["dp"], devices=range(world))
    assert mesh.coord("dp") == rank
    check_collectives(mesh, rank, world, dev)
    check_index_launch(rank, world, dev)
    try:
        dist.Mesh(axes=["dp"], devices=range(world + 1))
        raise AssertionError("a mesh larger than the world must be refused")
    except ValueError as e:
        assert "positions but the world has" in str(e)
    print(f"rank {rank} of {world}: ok ({info['launcher']}, {info['transport']})", flush=True)


if __name__ == "__main__":
    main()
