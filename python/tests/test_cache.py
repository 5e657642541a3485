"""tessera.compile's on-disk cache: a second compile of the same source, imports, flags and
compiler runs no compiler; a changed import or flag compiles again; concurrent writers (several
processes compiling the same source into an empty cache at once) all succeed and leave one
complete entry."""
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

import numpy as np

import helpers
import tessera
from tessera import _compile

KERNEL = textwrap.dedent("""\
    from consts import SCALE

    @kernel
    def scale(x: f32[n], y: mut f32[n]):
        i = tile.linear_id()
        if i < n:
            y[i] = x[i] * SCALE
    """)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


class Cache(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tessera-cache-test-")
        self.cache = os.path.join(self.dir, "cache", "python")
        self.count = os.path.join(self.dir, "count")
        # A tesserac that counts its runs (besides --version) and runs the real one.
        self.wrapper = os.path.join(self.dir, "tesserac")
        with open(self.wrapper, "w") as f:
            f.write(f"#!/bin/sh\n[ \"$1\" = --version ] || echo run >> {self.count}\nexec {_compile.tesserac_path()} \"$@\"\n")
        os.chmod(self.wrapper, stat.S_IRWXU)
        self.env = {"TESSERA_CACHE_DIR": os.path.dirname(self.cache), "TESSERA_TESSERAC": self.wrapper}
        self.saved = {k: os.environ.get(k) for k in self.env}
        os.environ.update(self.env)
        _compile._compiler_id = None
        self.src = os.path.join(self.dir, "scaler.tessera")
        write(self.src, KERNEL)
        write(os.path.join(self.dir, "consts.tessera"), "SCALE = 3.0\n")

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        _compile._compiler_id = None

    def runs(self):
        if not os.path.exists(self.count):
            return 0
        with open(self.count) as f:
            return len(f.read().split())

    def check_scale(self, mod, factor):
        if helpers.device() != "cpu":
            return
        x = helpers.rng(61).standard_normal(77, dtype=np.float32)
        y = np.zeros_like(x)
        mod.scale(x, y)
        np.testing.assert_array_equal(y, x * np.float32(factor))

    def test_off_compiles_without_a_cache(self):
        os.environ["TESSERA_CACHE_DIR"] = "off"  # tearDown restores it
        cwd = os.getcwd()
        os.chdir(self.dir)
        try:
            mod = tessera.compile(self.src, target="cpu", module_name="scaler_cache_off")
        finally:
            os.chdir(cwd)
        self.assertEqual(self.runs(), 1)
        self.check_scale(mod, 3.0)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "off")), "'off' must not be taken as a folder")
        self.assertFalse(os.path.exists(os.path.dirname(self.cache)))
        self.assertTrue(_compile.cache_root().startswith(tempfile.gettempdir()))

    def test_hits_and_misses(self):
        m1 = tessera.compile(self.src, target="cpu")
        self.assertEqual(self.runs(), 1)
        self.check_scale(m1, 3.0)
        self.assertIs(tessera.compile(self.src, target="cpu"), m1)
        self.assertEqual(self.runs(), 1, "a second compile of the same source must hit the cache")
        tessera.compile(self.src, target="cpu", opt=1)
        self.assertEqual(self.runs(), 2, "other flags are another entry")
        write(os.path.join(self.dir, "consts.tessera"), "SCALE = 5.0\n")
        m3 = tessera.compile(self.src, target="cpu")
        self.assertEqual(self.runs(), 3, "a changed import must compile again")
        self.check_scale(m3, 5.0)
        leftovers = [d for d in os.listdir(self.cache) if d.startswith(".build-")]
        self.assertEqual(leftovers, [])

    def test_compile_string_and_errors(self):
        src = "@kernel\ndef neg(x: f32[n], y: mut f32[n]):\n    i = tile.linear_id()\n    if i < n:\n        y[i] = -x[i]\n"
        m = tessera.compile_string(src, name="negate", target="cpu")
        tessera.compile_string(src, name="negate", target="cpu")
        self.assertEqual(self.runs(), 1)
        if helpers.device() == "cpu":
            x = np.arange(5, dtype=np.float32)
            y = np.zeros(5, np.float32)
            m.neg(x, y)
            np.testing.assert_array_equal(y, -x)
        with self.assertRaises(tessera.CompileError) as c:
            tessera.compile_string("@kernel\ndef bad(x: f32[n]):\n    y = undefined_name\n", target="cpu")
        self.assertIn("undefined_name", c.exception.diagnostics)

    def test_load_ahead_of_time(self):
        """tessera.load of a module built by hand (tesserac, then cc -shared against the package's
        runtime library), as docs/python.md shows."""
        import subprocess as sp
        d = os.path.join(self.dir, "aot")
        os.makedirs(d)
        write(os.path.join(d, "negate.tessera"), "@kernel\ndef neg(x: f32[n], y: mut f32[n]):\n"
              "    i = tile.linear_id()\n    if i < n:\n        y[i] = -x[i]\n")
        obj, hdr, so = (os.path.join(d, f) for f in ("negate.o", "negate.h", "negate.so"))
        sp.run([_compile.tesserac_path(), os.path.join(d, "negate.tessera"), "--target=cpu", "-o", obj, "-H", hdr],
               check=True)
        pkg = os.path.dirname(tessera.__file__)
        sp.run(["cc", "-shared", "-o", so, obj, os.path.join(pkg, "libtessera_pyrt.so"), "-Wl,-rpath," + pkg],
               check=True)
        m = tessera.load(so)
        self.assertIs(tessera.load(so), m)  # loaded once
        self.assertEqual(m.name, "negate")
        if helpers.device() == "cpu":
            x = np.arange(9, dtype=np.float32)
            y = np.zeros(9, np.float32)
            m.neg(x, y)
            np.testing.assert_array_equal(y, -x)
        import shutil
        lone = os.path.join(d, "lone.so")  # a shared object without its header
        shutil.copy(so, lone)
        with self.assertRaisesRegex(FileNotFoundError, r"header .*lone\.h is missing"):
            tessera.load(lone)

    def test_concurrent_writers(self):
        script = textwrap.dedent(f"""\
            import sys
            sys.path[:0] = {sys.path!r}
            import tessera
            m = tessera.compile({self.src!r}, target="cpu")
            print(m.path)
            """)
        procs = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=dict(os.environ), text=True) for _ in range(4)]
        outs = [p.communicate(timeout=300) for p in procs]
        for p, (out, err) in zip(procs, outs):
            self.assertEqual(p.returncode, 0, err)
        paths = {out.strip() for out, _ in outs}
        self.assertEqual(len(paths), 1, paths)  # every writer loads the one entry
        entries = [d for d in os.listdir(self.cache) if not d.startswith(".") and not d.endswith(".deps")
                   and d != "src"]
        self.assertEqual(len(entries), 1, entries)
        self.assertEqual([d for d in os.listdir(self.cache) if d.startswith(".build-")], [])


if __name__ == "__main__":
    unittest.main()
