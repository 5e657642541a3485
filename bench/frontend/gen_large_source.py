#!/usr/bin/env python3
"""Writes a syntactically rich Tessera module of about N lines (default 100,000) to stdout:
kernels with decorators, typed parameters, loops, conditionals, slices, calls, f-strings,
comprehensions and comments, so that every part of the scanner and parser is exercised."""
import sys

TEMPLATE = '''@kernel tile[(128,)] shared(8_KiB)
def group_sum_{i}(x: f32[n], out: mut f32[grid_groups], alpha: f32 = 1.0e-3):
    """Sums x per group ({i})."""
    smem = tshared.alloc[f32](128, swizzle="xor")
    i = tile.linear_id()
    acc = 0.0  # running sum
    for k in range(i, n, group_tile_count()):
        acc += alpha * x[k] ** 2 if k % 2 == 0 else -x[k]
    smem[i] = acc
    tbarrier()
    if i == 0 and not (n < 0):
        out[group_linear_id()] = reduce_sum(smem)
    elif i < 32:
        vals = [f"lane{{j}}" for j in range(4) if j != i]
    else:
        pass

@kernel.autotune(space=dict(BM=[128, 256], stages=[2, 3]))
def axpy_{i}(X: f16[m], Y: mut f16[m], alpha: f16):
    s0, s1 = tshared.alloc[f16](128), tshared.alloc[f16](128)
    for t in tile.range(m, step=128, prefetch=2):
        cp_async.shared.global(s1, X[t:t + 128])
        Y[t:t + 128] = tile.relu(tile.dot(s0, s1.T) + 0x1F) @ s0
        s0, s1 = s1, s0

'''


def main():
    target = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    lines_per = TEMPLATE.count("\n")
    out = sys.stdout
    out.write("from tessera import kernel, tile, tshared, cp_async\n\n")
    written = 2
    i = 0
    while written < target:
        out.write(TEMPLATE.format(i=i))
        written += lines_per
        i += 1


if __name__ == "__main__":
    main()
