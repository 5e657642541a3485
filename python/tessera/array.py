"""The spec's array.from_domain(D, dtype=, distribution=): a distributed tensor over a domain."""
from . import dist as _dist
from .domain import Rect


def from_domain(domain, dtype="f32", distribution=None, mesh=None, name=None):
    """A distributed tensor of the domain's extents: partitioned as `distribution` says (a
    dist.Block or ShardSpec; replicated when None) over `mesh` (the current mesh when None)."""
    if not isinstance(domain, Rect):
        raise TypeError(f"tessera.array.from_domain: expected a domain.Rect, got {type(domain).__name__}")
    return _dist.tensor(shape=domain.shape, layout=distribution, mesh=mesh, dtype=dtype, name=name)
