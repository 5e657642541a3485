#!/usr/bin/env python3
"""Copies every fenced code block of the spec chapters into tests/conformance/ as one .tessera
file each, with a header naming its origin and the lit RUN line that checks it parses.

Usage: scripts/extract-spec-blocks.py [--check] [SPEC_DIR] [OUT_DIR]
--check writes nothing: it fails unless every block is present, verbatim, in OUT_DIR.
Re-running rewrites the block text but keeps any extra RUN/CHECK lines a file already has
after the header (sema adds its expected diagnostics there)."""
import os
import re
import sys

NAMES = [
    "op_matmul_tile_shape", "all_reduce_grads", "saxpy_launch_grid", "gemm_tc", "flash_attention",
    "warp_reduce_sum", "streams_overlap", "double_buffer_pipeline", "deterministic_all_reduce",
    "coop_example", "graph_capture", "autotune_search", "fused_mlp", "scale", "group_sum",
    "axpy_tiled", "tp_gemm_index_launch", "domain_norm_layer", "region_privileges_step",
    "train_step_capture_graph", "attention_graph_module", "op_matmul_tile_shape_ch2", "mesh_72",
    "dist_tensor_shardspec", "saxpy_tile_first", "nvl72_mesh", "sharded_weight", "tp_axpy",
    "fp6_tensor_types", "grad_loss_fn", "gemm_swizzled_layout", "tp_gemm_all_gather",
    "transformer_block", "inspect_ir",
]
HEADER_END = "# ---- block ----"


def main():
    args = sys.argv[1:]
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = args[0] if len(args) > 0 else os.path.join(root, "..", "shared", "spec")
    out = args[1] if len(args) > 1 else os.path.join(root, "tests", "conformance")
    blocks = []
    for name in sorted(os.listdir(spec)):
        if not re.match(r"\d{3}_.*\.txt$", name):
            continue
        text = open(os.path.join(spec, name), encoding="utf-8").read()
        for i, m in enumerate(re.finditer(r"```(\w*)\n(.*?)```", text, re.S)):
            line = text.count("\n", 0, m.start()) + 1
            blocks.append((name, i + 1, line, m.group(1), m.group(2)))
    if len(blocks) != len(NAMES):
        sys.exit(f"expected {len(NAMES)} spec blocks, found {len(blocks)}: update NAMES")
    if check:
        bad = []
        for n, ((chapter, index, line, lang, body), stem) in enumerate(zip(blocks, NAMES), start=1):
            path = os.path.join(out, f"spec_{n:02d}_{stem}.tessera")
            if not os.path.exists(path):
                bad.append(f"missing {path}")
                continue
            text = open(path, encoding="utf-8").read()
            parts = text.split(HEADER_END + "\n", 1)
            if len(parts) != 2 or parts[1] != body:
                bad.append(f"{path} differs from block {index} of {chapter}")
            elif "# RUN: %tesserac --parse-only %s" not in parts[0]:
                bad.append(f"{path} lost its parse RUN line")
        for b in bad:
            print(b)
        print(f"{len(blocks) - len(bad)} of {len(blocks)} spec blocks present and verbatim")
        sys.exit(1 if bad else 0)
    os.makedirs(out, exist_ok=True)
    for n, ((chapter, index, line, lang, body), stem) in enumerate(zip(blocks, NAMES), start=1):
        path = os.path.join(out, f"spec_{n:02d}_{stem}.tessera")
        extra = []
        if os.path.exists(path):
            old = open(path, encoding="utf-8").read().split(HEADER_END + "\n")[0].splitlines()
            extra = [l for l in old if l.startswith("# RUN:") or l.startswith("# CHECK") or
                     l.startswith("# EXPECT")]
            extra = [l for l in extra if "--parse-only" not in l]
        header = [
            f"# Conformance: spec block {n} of 34, copied verbatim from",
            f"# shared/spec/{chapter}, block {index} (```{lang}, line {line}).",
            "# The front end must accept it with no error.",
            "# RUN: %tesserac --parse-only %s",
            *extra,
            HEADER_END,
        ]
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(header) + "\n" + body)
    print(f"wrote {len(blocks)} conformance files to {out}")


if __name__ == "__main__":
    main()
