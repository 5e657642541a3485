"""The spec's autotune.search(kernel=, params=, objective=): the fastest of a kernel's compiled
candidates (@kernel.autotune(space=...), docs/abi.md "Autotuning"), recorded for later launches.

The candidates are compiled with the kernel, so `params` must be its space (checked); the search
times them on arguments: `args=` now, or, as in the spec's block that passes none, the kernel's
next call (which then launches the winner). Candidates that would change the result bits are never
compiled (the runtime compares every candidate's bits with the first's)."""


class Config(dict):
    """The chosen parameter values ({"BM": 128, ...}); `times_ms` has each candidate's median time
    (negative: excluded), `searched` whether the search has run."""

    def __init__(self, kernel):
        super().__init__()
        self.kernel = kernel
        self.times_ms = []
        self.searched = False

    def _record(self, best, times):
        self.update(self.kernel._candidate(best))
        self.times_ms = list(times)
        self.best = best
        self.searched = True


def space(kernel):
    """The kernel's compiled space: {parameter: sorted values of its candidates}."""
    out = {}
    for i in range(kernel.num_candidates):
        for name, value in kernel._candidate(i).items():
            out.setdefault(name, set()).add(value)
    return {k: sorted(v) for k, v in out.items()}


def search(kernel=None, params=None, objective="runtime", args=None):
    if kernel is None:
        raise TypeError("autotune.search: kernel= is required")
    if objective != "runtime":
        raise ValueError(f"autotune.search: objective {objective!r}: only 'runtime' (median event time) exists")
    have = space(kernel)
    if params is not None:
        want = {k: sorted(int(v) for v in vs) for k, vs in dict(params).items()}
        if set(want) != set(have) or any(not set(have[k]) <= set(want[k]) for k in have):
            raise ValueError(f"autotune.search: params {want} are not the space kernel '{kernel.name}' was compiled "
                             f"with ({have or 'no @kernel.autotune space'}); the candidates are compiled with the "
                             "kernel: change its @kernel.autotune(space=...)")
    config = Config(kernel)
    if args is not None:
        config._record(*kernel._autotune_search(*args))
    else:
        kernel._search_at_next_call(config._record)
    return config
