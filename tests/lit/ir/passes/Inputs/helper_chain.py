"""Writes a module of helper functions: `chain N` makes h_i call h_{i-1} once (N levels);
`doubling N` makes g_i call g_{i-1} twice, so its inlined size is 2^N."""
import sys

kind, n = sys.argv[1], int(sys.argv[2])
f = "h" if kind == "chain" else "g"
out = [f"def {f}0(x: f32) -> f32:\n    return x + 1.0\n"]
for i in range(1, n):
    body = f"{f}{i-1}(x) * 0.5" if kind == "chain" else f"{f}{i-1}(x) + {f}{i-1}(x)"
    out.append(f"def {f}{i}(x: f32) -> f32:\n    return {body}\n")
out.append(f"@kernel\ndef k(x: f32[n], y: mut f32[n]):\n    i = tile.linear_id()\n    if i < n:\n"
           f"        y[i] = {f}{n-1}(x[i])\n")
sys.stdout.write("".join(out))
