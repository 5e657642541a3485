"""The spec's graph capture: launches recorded once and replayed without the per-launch host work.

    with graph.capture() as g:
        gemm_tc(A, B, C)
        saxpy(alpha, X, Y, Out)
    graph.launch(g)

Inside the block every launch of this thread goes to a capturing stream (a new one unless
stream= is given) and is recorded, not run; the captured graph replays the launches on the
same tensors (their memory must stay alive), in order. On the CPU executor the capture records
the launches with copies of their arguments.
"""
import contextlib

from . import _tessera
from ._decorators import _Decorator

# @graph.module("name"): a host function defined in Python (see tessera._decorators).
module = _Decorator("graph.module")


class Captured:
    """What `with graph.capture() as g` binds: `g.graph` once the block has ended."""

    def __init__(self, stream):
        self.stream = stream
        self.graph = None

    def launch(self, stream=None):
        launch(self, stream)


@contextlib.contextmanager
def capture(stream=None):
    s = stream or _tessera.Stream()
    g = Captured(s)
    s._begin_capture()
    _tessera._push_stream(s)
    try:
        yield g
    except BaseException:
        _tessera._pop_stream()
        try:
            s._end_capture()
        except Exception:
            pass
        raise
    _tessera._pop_stream()
    g.graph = s._end_capture()


def launch(g, stream=None):
    """Replays a captured graph on `stream` (the default stream when None)."""
    graph = g.graph if isinstance(g, Captured) else g
    if graph is None:
        raise ValueError("graph.launch: the capture block has not ended")
    graph.launch(stream)
