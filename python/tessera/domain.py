"""The spec's domain.Rect: the index space of an array (array.from_domain)."""


class Rect:
    """A rectangular domain of `extents` (one per dimension)."""

    def __init__(self, extents):
        self.extents = tuple(int(e) for e in extents)
        if any(e < 0 for e in self.extents):
            raise ValueError(f"tessera.domain.Rect: negative extent in {self.extents}")

    @property
    def shape(self):
        return self.extents

    @property
    def rank(self):
        return len(self.extents)

    def __repr__(self):
        return f"Rect({self.extents})"
