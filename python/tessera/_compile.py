"""tessera.compile: tesserac, an on-disk cache, and a shared object the package loads.

The cache key is the source, every module it imports (tesserac -MD lists them), the flags, the
module name and the compiler (its version text, its binary's size and modification time, and the
standard library's sources). An entry is a directory `<key>/` holding `m.so`, `m.h` and
`meta.json`; it is built in a private temporary directory and renamed into place, so concurrent
writers (two processes compiling the same source) each leave one complete entry and never read a
partial one. `<key1>.deps` (key1: everything but the imported modules) lists the imports of the
last compile, so a lookup hashes them without running the compiler.
"""
import ctypes
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from . import _paths
from ._errors import CompileError

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_compiler_id = None


def tesserac_path():
    return os.environ.get("TESSERA_TESSERAC") or _paths.TESSERAC


def stdlib_dir():
    return os.environ.get("TESSERA_STDLIB_DIR") or _paths.STDLIB_DIR


_private_root = None


def cache_root():
    # The same root as tesserac's ptxas cache (codegen/target/AssemblyCache.cpp), a folder of our
    # own under it; "off" or "0" there turn caching off: a private folder for this process.
    global _private_root
    root = os.environ.get("TESSERA_CACHE_DIR")
    if root in ("off", "0"):
        if _private_root is None:
            _private_root = tempfile.mkdtemp(prefix="tessera-python-")
        return _private_root
    if not root:
        root = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                            "tessera")
    root = os.path.join(root, "python")
    os.makedirs(root, exist_ok=True)
    return root


def _hash_file(path, h):
    with open(path, "rb") as f:
        h.update(f.read())


def compiler_id():
    """What identifies the compiler: `tesserac --version`, the binary's size and mtime (a rebuilt
    development compiler keeps its version), and the standard library's sources."""
    global _compiler_id
    if _compiler_id is None:
        exe = tesserac_path()
        if not os.path.exists(exe):
            raise CompileError(f"tesserac not found at {exe} (set TESSERA_TESSERAC)")
        version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
        st = os.stat(exe)
        h = hashlib.sha256(f"{version}|{st.st_size}|{int(st.st_mtime)}".encode())
        for f in sorted(glob.glob(os.path.join(stdlib_dir(), "stdlib", "*.tessera"))):
            _hash_file(f, h)
        _compiler_id = h.hexdigest()
    return _compiler_id


def _gpu_driver_present():
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def default_target():
    """Code for both devices where a GPU driver exists (the process may run either), else the CPU
    executor's only (ptxas is slow and the GPU code would never run)."""
    dev = os.environ.get("TESSERA_DEVICE")
    if dev == "cpu":
        return "cpu"
    return "all" if dev == "gpu" or _gpu_driver_present() else "cpu"


def compile_flags(gpu=None, target=None, bounds_check=None, include=(), opt=None, flags=()):
    out = []
    target = target or default_target()
    if target not in ("all", "gpu", "cpu"):
        raise ValueError(f"tessera.compile: target must be 'all', 'gpu' or 'cpu', not {target!r}")
    out.append(f"--target={target}")
    if gpu:
        out.append("--gpu=" + (gpu if isinstance(gpu, str) else ",".join(gpu)))
    if bounds_check is not None:
        out.append("--bounds-check" if bounds_check else "--no-bounds-check")
    if opt is not None:
        if opt not in (0, 1, 2, 3):
            raise ValueError("tessera.compile: opt must be 0, 1, 2 or 3")
        out.append(f"-O{opt}")
    for d in ([include] if isinstance(include, str) else include):
        out += ["-I", os.path.abspath(d)]
    out += list(flags)
    return out


def _digest(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()


def _deps_digest(deps):
    h = hashlib.sha256()
    for d in deps:
        h.update(d.encode() + b"\0")
        try:
            _hash_file(d, h)
        except OSError:
            h.update(b"<missing>")
    return h.hexdigest()


def _read_text(path):
    with open(path) as f:
        return f.read()


def _read_deps(depfile, obj):
    text = _read_text(depfile).replace("\\\n", " ")
    _, _, rest = text.partition(":")
    return sorted(set(p for p in rest.split() if p and os.path.abspath(p) != os.path.abspath(obj)))


def _write_atomic(path, text):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _link(obj, so):
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("c++")
    if not cc:
        raise CompileError("tessera.compile: no C compiler (cc) to link the module into a shared object")
    rt = os.path.join(_PKG_DIR, "libtessera_pyrt.so")
    cmd = [cc, "-shared", "-o", so, obj, rt, "-Wl,-rpath," + _PKG_DIR, "-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise CompileError(f"tessera.compile: linking {os.path.basename(so)} failed:\n{r.stderr}", r.stderr)


def _run_tesserac(source, module_name, flags, outdir):
    obj, hdr, dep = (os.path.join(outdir, n) for n in ("m.o", "m.h", "m.d"))
    cmd = [tesserac_path(), source, "-o", obj, "-H", hdr, "-MD", "-MF", dep, f"--module-name={module_name}",
           f"--stdlib-dir={stdlib_dir()}", "--color=never"] + flags
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise CompileError(f"tesserac refused {source}:\n{r.stderr.strip()}", r.stderr)
    if r.stderr.strip():
        sys.stderr.write(r.stderr)  # warnings
    return obj, hdr, _read_deps(dep, obj)


def _key1(source, module_name, flags):
    with open(source, "rb") as f:
        return _digest(source, f.read(), module_name, json.dumps(flags), compiler_id())


def cached_lookup(source, module_name, flags):
    """The cache entry for `source` compiled with `flags` as `module_name` when there is one for
    its imports as they are now: (directory, meta), or None. Runs no compiler."""
    source = os.path.abspath(source)
    root = cache_root()
    key1 = _key1(source, module_name, flags)
    index = os.path.join(root, key1 + ".deps")
    try:
        deps = json.loads(_read_text(index))
        entry = os.path.join(root, _digest(key1, _deps_digest(deps)))
        return entry, json.loads(_read_text(os.path.join(entry, "meta.json")))
    except (OSError, ValueError):
        return None  # no entry, or a damaged index: compile again


def cached_build(source, module_name, flags, force=False):
    """The cache entry for `source` compiled with `flags` as `module_name`, compiled now when the
    cache has none: (directory, meta)."""
    source = os.path.abspath(source)
    if not os.path.exists(source):
        raise FileNotFoundError(f"tessera.compile: no such file: {source}")
    found = None if force else cached_lookup(source, module_name, flags)
    if found:
        return found
    root = cache_root()
    key1 = _key1(source, module_name, flags)
    tmp = tempfile.mkdtemp(dir=root, prefix=".build-")
    try:
        obj, _, deps = _run_tesserac(source, module_name, flags, tmp)
        _link(obj, os.path.join(tmp, "m.so"))
        os.remove(obj)
        meta = {"source": source, "module": module_name, "flags": flags, "deps": deps}
        with open(os.path.join(tmp, "meta.json"), "w") as f:
            json.dump(meta, f)
        entry = os.path.join(root, _digest(key1, _deps_digest(deps)))
        try:
            os.rename(tmp, entry)
        except OSError:  # another process made the same entry first: use theirs
            shutil.rmtree(tmp, ignore_errors=True)
        _write_atomic(os.path.join(root, key1 + ".deps"), json.dumps(deps))
        return entry, json.loads(_read_text(os.path.join(entry, "meta.json")))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def module_stem(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    stem = re.sub(r"\W", "_", stem)
    return stem if stem and not stem[0].isdigit() else "m_" + stem
