"""Every code block of the spec's chapters (tests/conformance/spec_NN_*.tessera holds them verbatim),
run from Python by every rank (mpirun -n 2 CPU ranks in CI: the meshes are real).

Host-code blocks run as Python with only their imports, sizes and device counts adjusted: the
adjustments are the prelude that defines the names the block uses without defining them (inputs
of chosen sizes, the mesh, kernels of tests/kernels/spec_setup.tessera) and the few rewritten
lines listed per block; `from __future__ import annotations` is on (Tessera annotations such as
f32[n] are not Python values). A check after the block verifies what it computed. Kernel-source
blocks (Tessera, not Python) are compiled by tessera.compile_string. Each block's outcome is
compared with the expected one, and a table of all 34 is printed; docs/python.md says why the
blocks that do not run cannot. Exits 1 on any unexpected outcome."""
import __future__
import linecache
import os
import re
import sys
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import helpers  # noqa: E402
import tessera  # noqa: E402
from tessera import dist  # noqa: E402

torch = helpers.torch
CONFORMANCE = os.path.join(helpers.ROOT, "tests", "conformance")


def block_text(n):
    name = next(f for f in os.listdir(CONFORMANCE) if f.startswith(f"spec_{n:02d}_"))
    text = open(os.path.join(CONFORMANCE, name)).read()
    return name[:-len(".tessera")], text.split("# ---- block ----\n", 1)[1]


def tensor(seed, shape, dtype="f32"):
    a = helpers.rng(seed).standard_normal(shape)
    if torch is None:
        return a.astype({"f32": np.float32, "f64": np.float64}[dtype])
    t = torch.from_numpy(a).to({"f32": torch.float32, "f64": torch.float64, "bf16": torch.bfloat16}[dtype])
    return t.to(helpers.device())


def as_np(t):
    return t.detach().float().cpu().numpy() if torch is not None and isinstance(t, torch.Tensor) else np.asarray(t)


def close(got, want, tol):
    got, want = as_np(got).astype(np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    err = np.max(np.abs(got - want) / (np.abs(want) + 1)) if got.size else 0.0
    assert err <= tol, f"relative error {err} above {tol}"


def tree_sum(values):
    if len(values) == 1:
        return values[0]
    half = 1
    while half * 2 < len(values):
        half *= 2
    return tree_sum(values[:half]) + tree_sum(values[half:])


def setup_module():
    return helpers.module("spec_setup", bounds_check=True)


def run_python(n, text, env):
    """Runs block `n` (text) as Python in `env` (a dict), with Tessera annotations deferred."""
    filename = f"<spec block {n}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)  # inspect.getsource
    code = compile(text, filename, "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)
    exec(code, env)


WORLD = None


def world():
    global WORLD
    if WORLD is None:
        WORLD = dist.info()["world_size"]
    return WORLD


def rank():
    return dist.info()["rank"]


def mesh(axes, shape=None):
    return dist.Mesh(axes=list(axes), shape=shape or [world()] + [1] * (len(axes) - 1))


# ---- the preludes and checks of the host-code blocks ----

def p_matmul():
    return {"A": tensor(1, (33, 17)), "B": tensor(2, (17, 9))}


def c_matmul(env):
    close(env["Y"], as_np(env["A"]).astype(np.float64) @ as_np(env["B"]), 1e-5)


def p_grads():
    mesh(["dp"])
    return {"local_grads": tensor(10 + rank(), (257,))}


def c_grads(env, name="grads"):
    vals = [as_np(tensor(10 + r, (257,))) for r in range(world())]
    assert np.array_equal(as_np(env[name]).view(np.uint32), tree_sum(vals).view(np.uint32)), "bits of the tree sum"


def p_saxpy_grid():
    return {"N": 1000, "a": 0.5, "X": tensor(20, (1000,)), "Y": tensor(21, (1000,)), "Out": tensor(22, (1000,))}


def c_saxpy_grid(env):
    want = (np.float32(0.5) * as_np(env["X"]) + as_np(env["Y"])).astype(np.float32)
    assert np.array_equal(as_np(env["Out"]), want)


def gemm_inputs(seed):
    A, B = tensor(seed, (96, 64), "bf16"), tensor(seed + 1, (64, 80), "bf16")
    C = tensor(seed + 2, (96, 80)) * 0 if torch is not None else np.zeros((96, 80), np.float32)
    return A, B, C


def c_gemm(A, B, C):
    close(C, as_np(A).astype(np.float64) @ as_np(B), 1e-5)


def p_streams():
    m = setup_module()
    A, B, C = gemm_inputs(30)
    host_X = tensor(33, (4099,)).cpu() if torch is not None else tensor(33, (4099,))
    device_X = tensor(34, (4099,))
    return {"gemm_tc": m.gemm_tc, "A": A, "B": B, "C": C, "grid": None, "block": None, "host_X": host_X,
            "device_X": device_X}


def c_streams(env):
    assert np.array_equal(as_np(env["device_X"]), as_np(env["host_X"]))
    c_gemm(env["A"], env["B"], env["C"])


def p_all_reduce_det():
    return {"X": tensor(10 + rank(), (257,))}


def p_tp_gemm():
    m = mesh(["tp"])
    M, K, N = 8, 4 * world(), 6 * world()
    col, row = dist.ShardSpec(("col",), ("tp",)), dist.ShardSpec(("row",), ("tp",))
    return {"A": dist.tensor((M, K), col, m, "f16"), "B": dist.tensor((K, N), row, m, "f16"),
            "C": dist.tensor((M, N), col, m, "f32")}


def c_tp_gemm(env):
    # The spec's kernel is a declaration (`...`): tesserac warns that it "cannot be compiled or run"
    # yet compiles it to a kernel that does nothing, which index_launch checks (K from A's global
    # shape, tp from the mesh) and launches: C keeps its zeros (docs/python.md).
    assert not np.any(as_np(env["C"].local))


def p_capture():
    m = setup_module()
    A, B, C = gemm_inputs(40)
    X, Y = tensor(43, (777,)), tensor(44, (777,))
    Out = X * 0
    return {"gemm_tc": m.gemm_tc, "saxpy": m.saxpy, "A": A, "B": B, "C": C, "alpha": 1.5, "X": X, "Y": Y, "Out": Out}


def c_capture(env):
    c_gemm(env["A"], env["B"], env["C"])
    want = (np.float32(1.5) * as_np(env["X"]) + as_np(env["Y"])).astype(np.float32)
    assert np.array_equal(as_np(env["Out"]), want)


def p_autotune():
    return {"gemm_tc": setup_module().gemm_tc}


def c_autotune(env):
    config = env["config"]
    assert not config.searched  # the spec's block passes no arguments: the next call searches
    A, B, C = gemm_inputs(50)
    env["gemm_tc"](A, B, C)
    assert config.searched and set(config) == {"BM", "BN", "BK"}, config
    assert len(config.times_ms) == env["gemm_tc"].num_candidates
    c_gemm(A, B, C)


def p_domain():
    mesh(["dp", "tp"], [1, world()])
    return {"B": 2, "S": 4 * world(), "Dm": 24}


def c_domain(env):
    X = env["X"]
    assert X.shape == (2, 4 * world(), 24) and tuple(X.local.shape) == (2, 4, 24), (X.shape, X.local.shape)
    x = tensor(60, (5, 24))
    y = x * 0
    env["norm_layer"](x, y)
    xs = as_np(x).astype(np.float64)
    close(y, xs / np.sqrt((xs * xs).mean(axis=1, keepdims=True) + 1e-6), 1e-5)


def c_step(env):
    W, X = tensor(70, (12, 7)), tensor(71, (9, 12))
    Y = tensor(72, (9, 7))
    before = as_np(Y).astype(np.float64)
    env["step"](W, X, Y)
    close(Y, before + as_np(X).astype(np.float64) @ as_np(W), 1e-5)


def c_train_step(env):
    env["train_step"](tensor(75, (4, 4)))  # compiling it: model and loss_fn are not defined


def c_attention(env):
    Q, K, V = tensor(80, (11, 8)), tensor(81, (13, 8)), tensor(82, (13, 5))
    s = as_np(Q).astype(np.float64) @ as_np(K).T
    p = np.exp(s - s.max(axis=1, keepdims=True))
    close(env["attention"](Q, K, V), (p / p.sum(axis=1, keepdims=True)) @ as_np(V), 1e-5)


def p_mesh_world():
    return {}


def c_mesh(env, axes):
    m = env["mesh"]
    assert m.axes == list(axes) and np.prod(list(m.shape.values())) == world(), m


def p_shard():
    return {"mesh": mesh(["tp", "pp"])}


def c_shard(env, shape, local):
    W = env["W"]
    assert W.shape == shape and tuple(W.local.shape) == local, (W.shape, tuple(W.local.shape))
    assert str(W.local.dtype) in ("torch.bfloat16", "bfloat16"), W.local.dtype


def p_grad():
    import tessera.op as op
    x, y_true = tensor(90, (6, 5)), tensor(91, (6, 3))
    return {"x": x, "y_true": y_true, "W": tensor(92, (5, 3)),
            "model": lambda x, W: op.gelu(op.matmul(x, W)), "mse": lambda y, t: ((y - t) ** 2).mean()}


def c_grad(env):
    x, W, t = (env[k].detach().double() for k in ("x", "W", "y_true"))
    W.requires_grad_()
    ((torch.nn.functional.gelu(x @ W, approximate="tanh") - t) ** 2).mean().backward()
    close(env["gW"], W.grad.numpy(), 1e-4)


def p_all_gather():
    mesh(["tp"])
    return {"x": tensor(100 + rank(), (5, 4)), "W_shard": tensor(200 + rank(), (4, 3))}


def c_all_gather(env):
    parts = [as_np(tensor(100 + r, (5, 4))) @ as_np(tensor(200 + r, (4, 3))) for r in range(world())]
    close(env["y"], np.concatenate(parts), 1e-5)


def c_block(env):
    S, E = 32, 64
    x, Wqkv, Wo = tensor(110, (S, E)), tensor(111, (E, 3 * E)) * 0.125, tensor(112, (E, E)) * 0.125
    got = env["block"](x, Wqkv, Wo)
    qkv = as_np(x).astype(np.float64) @ as_np(Wqkv)
    heads = []
    for h in range(16):
        d = E // 16
        q, k, v = (qkv[:, i * E + h * d:i * E + (h + 1) * d] for i in range(3))
        s = q @ k.T / np.sqrt(d)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        heads.append((p / p.sum(axis=1, keepdims=True)) @ v)
    close(got, np.concatenate(heads, axis=1) @ as_np(Wo), 1e-4)


def p_inspect():
    return {"kernel": setup_module().saxpy}


def c_inspect(env):
    out = env["__stdout__"]
    assert "tile.func @saxpy" in out and ("define" in out or ".entry saxpy" in out), out[:300]


# ---- the table: one row per block ----
# kind: "host" (Python) or "kernel" (Tessera source); host_from: where the host code of a block that
# starts with a kernel begins (the kernel is Tessera source, compiled; `mut` is not Python).
# imports: lines prepended to the host code (adjusted imports).
# sizes: (old, new) rewrites that only change sizes or device counts. expect: "ran" / "compiled",
# or ("error", regex) for what happens as written. amend: (old, new, why) rewrites beyond those
# adjustments, run only to show what the block needs (expected "ran" / "compiled").
IMPORT_TESSERA = ["import tessera"]
BLOCKS = {
    1: dict(kind="host", imports=["from tessera import op"], prelude=p_matmul, check=c_matmul, expect="ran"),
    2: dict(kind="host", prelude=p_grads, check=c_grads, expect="ran"),
    3: dict(kind="host", host_from="launch.grid", imports=["from tessera import launch, ceil_div"],
            prelude=p_saxpy_grid, check=c_saxpy_grid,
            expect=("error", r"cannot write to 'Out': the parameter is read-only"),
            amend=[("Out: tensor[float]", "Out: mut tensor[float]", "the kernel writes Out, so Out must be mut")]),
    4: dict(kind="kernel", expect=("error", r"cannot write to 'C': the parameter is read-only"),
            amend=[("C: tensor[float]", "C: mut tensor[float]", "the kernel writes C, so C must be mut")]),
    5: dict(kind="kernel", expect=("error", r"'tile.barrier' needs a group")),
    6: dict(kind="kernel", expect="compiled"),
    7: dict(kind="host", prelude=p_streams, check=c_streams,
            expect=("error", r"SyntaxError"),
            amend=[("gemm_tc[grid, block, stream=s2](A, B, C)", "gemm_tc[grid, block, s2](A, B, C)",
                    "Python has no keyword arguments in subscripts (PEP 637 was rejected)")]),
    8: dict(kind="kernel", expect=("error", r"'tile.alloc_shared' needs a group")),
    9: dict(kind="host", prelude=p_all_reduce_det, check=lambda env: c_grads(env, "Y"), expect="ran",
            sizes=[("devices=range(8)", "devices=range(WORLD)")]),
    10: dict(kind="kernel", expect=("error", r"every group updates the same element of 'X'")),
    11: dict(kind="host", prelude=p_capture, check=c_capture, expect="ran"),
    12: dict(kind="host", prelude=p_autotune, check=c_autotune, expect="ran"),
    13: dict(kind="kernel", expect="compiled"),
    14: dict(kind="kernel", expect="compiled"),
    15: dict(kind="kernel", expect="compiled"),
    16: dict(kind="kernel", expect=("error", r"'tshared.alloc' needs a group")),
    17: dict(kind="host", host_from="# Launch kernel", imports=IMPORT_TESSERA, prelude=p_tp_gemm, check=c_tp_gemm,
             expect="ran"),
    18: dict(kind="host", imports=IMPORT_TESSERA + ["from tessera import jit"], prelude=p_domain, check=c_domain,
             expect="ran"),
    19: dict(kind="host", imports=["from tessera import jit"], check=c_step, expect="ran"),
    20: dict(kind="host", imports=["from tessera import jit"], check=c_train_step,
             expect=("error", r"model|loss_fn")),
    21: dict(kind="host", check=c_attention, expect="ran"),
    22: dict(kind="host", imports=["from tessera import op"], prelude=p_matmul, check=c_matmul, expect="ran"),
    23: dict(kind="host", prelude=p_mesh_world, check=lambda env: c_mesh(env, ["tp", "pp", "dp"]),
             sizes=[("devices=range(72)", "devices=range(WORLD)")],
             expect=("error", r"a mesh of 3 axes needs shape="),
             amend=[("devices=range(WORLD))", "devices=range(WORLD), shape=(WORLD, 1, 1))",
                     "72 devices on three axes have many shapes; the block names none")]),
    24: dict(kind="host", imports=["from tessera import dist"], prelude=p_shard, check=lambda env: c_shard(env, (64, 48), (64 // WORLD, 48)),
             sizes=[("shape=(1_000_000, 1_000_000)", "shape=(64, 48)")], expect="ran"),
    25: dict(kind="kernel", expect="compiled"),
    26: dict(kind="host", prelude=p_mesh_world, check=lambda env: c_mesh(env, ["dp", "tp", "pp"]),
             sizes=[("range(72)", "range(WORLD)"), ("shape=(4,9,2)", "shape=(1,WORLD,1)")], expect="ran"),
    27: dict(kind="host", imports=["from tessera import dist"], prelude=lambda: {"mesh": mesh(["tp"])},
             check=lambda env: c_shard(env, (32, 16 * WORLD), (32, 16)),
             sizes=[("shape=(8192, 8192)", "shape=(32, 16 * WORLD)")], expect="ran"),
    28: dict(kind="kernel", expect=("error", r"tshared.alloc")),
    29: dict(kind="kernel", expect="compiled"),
    30: dict(kind="host", imports=IMPORT_TESSERA, prelude=p_grad, check=c_grad, expect="ran", needs_torch=True),
    31: dict(kind="kernel", expect=("error", r"error")),
    32: dict(kind="host", imports=["from tessera.op import all_gather"], prelude=p_all_gather, check=c_all_gather,
             expect="ran"),
    33: dict(kind="host", imports=["from tessera import jit, autodiff"], check=c_block, expect="ran"),
    34: dict(kind="host", prelude=p_inspect, check=c_inspect, expect="ran"),
}


def compose(n, row, text, amend):
    """(kernel source or "", host code or the kernel block's source)."""
    for old, new in row.get("sizes", []):
        assert old in text, f"block {n}: {old!r} not found"
        text = text.replace(old, new)
    if amend:
        for old, new, _ in row.get("amend", []):
            assert old in text, f"block {n}: {old!r} not found"
            text = text.replace(old, new)
    kernels = ""
    if row.get("host_from"):
        at = text.index(row["host_from"])
        kernels, text = text[:at], text[at:]
    return kernels, "\n".join(row.get("imports", [])) + "\n" + text


def compile_kernels(n, source):
    """The kernels and host functions of a block's Tessera part, by name."""
    import contextlib
    import io
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        mod = tessera.compile_string(source, name=f"spec_block_{n}")
    names = dict(mod.functions)
    names.update({k: v for k, v in mod.kernels.items() if "__k" not in k})
    for wanted in re.findall(r"^def (\w+)", source, re.M):
        if wanted not in names:
            raise RuntimeError(f"the block's Tessera source defines no kernel '{wanted}' ({err.getvalue().strip()})")
    return names


def run_block(n, row, amend):
    """'ran' / 'compiled', or ('error', message)."""
    _, text = block_text(n)
    kernels, text = compose(n, row, text, amend)
    try:
        if row["kind"] == "kernel":
            tessera.compile_string(text, name=f"spec_block_{n}")
            return "compiled"
        env = {"__name__": f"spec_block_{n}", "WORLD": world()}
        env.update(row.get("prelude", dict)())
        if kernels:
            env.update(compile_kernels(n, kernels))
        import contextlib
        import io
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            run_python(n, text, env)
        env["__stdout__"] = out.getvalue()
        if row.get("check"):
            row["check"](env)
        return "ran"
    except AssertionError:
        return ("failed check", traceback.format_exc(limit=-2))
    except BaseException as e:  # noqa: BLE001 - the outcome is the point
        msg = f"{type(e).__name__}: {e}"
        diag = getattr(e, "diagnostics", "")
        return ("error", msg + ("\n" + diag if diag else ""))


def matches(outcome, expect):
    if isinstance(expect, str):
        return outcome == expect
    return isinstance(outcome, tuple) and outcome[0] == "error" and re.search(expect[1], outcome[1]) is not None


def short(outcome):
    if isinstance(outcome, str):
        return outcome
    lines = outcome[1].strip().splitlines() or [""]
    first = next((ln for ln in lines if ": error: " in ln), lines[0])  # tesserac's first error
    first = re.sub(r"^\S*/spec_block_\d+\.tessera:", "line ", re.sub(r"^\S*/\w+\.tessera:", "line ", first))
    return f"{outcome[0]}: {first[:120]}"


def main():
    only = [int(a) for a in sys.argv[1:]] or sorted(BLOCKS)
    bad = 0
    lines = []
    for n in only:
        row = BLOCKS[n]
        name, _ = block_text(n)
        if row.get("needs_torch") and torch is None:
            lines.append(f"{n:2d} {name:36s} {row['kind']:6s} skipped: needs PyTorch")
            continue
        got = run_block(n, row, amend=False)
        ok = matches(got, row["expect"])
        line = f"{n:2d} {name:36s} {row['kind']:6s} {'ok ' if ok else 'BAD'} as written: {short(got)}"
        if row.get("amend"):
            fixed = run_block(n, row, amend=True)
            good = fixed in ("ran", "compiled")
            ok = ok and good
            why = "; ".join(a[2] for a in row["amend"])
            line += f"\n{'':47s}{'ok ' if good else 'BAD'} amended ({why}): {short(fixed)}"
            if not good:
                line += "\n" + str(fixed[1] if isinstance(fixed, tuple) else fixed)
        if not ok and isinstance(got, tuple):
            line += "\n" + got[1]
        bad += not ok
        lines.append(line)
    if rank() == 0:
        print("\n".join(lines))
        print(f"{len(only) - bad} of {len(only)} blocks as expected")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
