"""The spec's kernel.inspect_ir("tile" | "target"): the compiler's view of a kernel of a compiled
module, `mod.k.inspect_ir("tile")` (its Tile IR after the pipeline) or "target" (its PTX on a GPU
target, else the LLVM IR of its CPU code)."""
import re
import subprocess

from . import _compile


def _function_text(text, name, level):
    """The part of the compiler's output for kernel `name`."""
    if level == "tile":
        m = re.search(rf"^tile\.func @{re.escape(name)}\b.*?^}}\s*$", text, re.S | re.M)
    elif level == "ptx":
        m = re.search(rf"^\.(?:visible|weak) \.entry {re.escape(name)}\b.*?^}}\s*$", text, re.S | re.M)
    else:
        m = re.search(rf"^define [^\n]*@\"?{re.escape(name)}[\w.]*\"?\(.*?^}}\s*$", text, re.S | re.M)
    return m.group(0) if m else text


def inspect_ir(kernel, level="tile"):
    """Tile IR ("tile") or target code ("target", "ptx", "llvm") of a kernel of a module that
    tessera.compile built (its source and flags are known)."""
    module = getattr(kernel, "module", None)
    if module is None or not module.source:
        raise ValueError("inspect_ir: the kernel's module was not built by tessera.compile (its source is unknown)")
    flags = [f for f in module.flags if not f.startswith("--target=")]
    if level == "tile":
        emit = ["--emit=tile-ir"]
    elif level in ("target", "ptx", "llvm"):
        gpu = level == "ptx" or (level == "target" and any(f in module.flags for f in ("--target=all", "--target=gpu")))
        emit = ["--emit=ptx", "--target=gpu"] if gpu else ["--emit=llvm", "--target=cpu"]
        level = "ptx" if gpu else "llvm"
    else:
        raise ValueError(f"inspect_ir: level must be 'tile' or 'target', not {level!r}")
    cmd = [_compile.tesserac_path(), module.source, "-o", "-", f"--module-name={module.name}",
           f"--stdlib-dir={_compile.stdlib_dir()}", "--color=never"] + emit + flags
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"inspect_ir: tesserac failed:\n{r.stderr}")
    return _function_text(r.stdout, kernel.name, level)
