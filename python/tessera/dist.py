"""tessera.dist: the spec's meshes, distributed tensors and index launches over libtessera_dist.

One process per GPU or CPU rank, started by mpirun (CPU ranks), tessera-run or torchrun (GPU
ranks), or alone (a world of one). The world is joined at the first Mesh (or dist.init()), which
must come before any other Tessera call of the process (it binds the rank's GPU).

    mesh = dist.Mesh(axes=["dp"], devices=range(world_size))
    W = dist.tensor(shape=(8192, 8192), layout=dist.ShardSpec(partition=("col",), mesh_axes=("tp",)),
                    mesh=mesh, dtype="bf16")
    W.local                       # the local shard as a PyTorch tensor (no copy)
    tessera.index_launch(axis="tp")(mod.tp_gemm)(A.parts("tp"), B.parts("tp"), C)
"""
import atexit
import math

from . import _tessera

_d = _tessera.dist
_state = {"init": False, "mesh": None, "count": 0}
_DTYPE_ALIASES = {"bfloat16": "bf16", "float32": "f32", "float": "f32", "float16": "f16", "half": "f16",
                  "float64": "f64", "double": "f64", "int32": "i32", "int64": "i64", "int8": "i8", "uint8": "u8",
                  "fp8": "fp8_e4m3", "float8_e4m3fn": "fp8_e4m3", "float8_e5m2": "fp8_e5m2"}


def init(timeout=0.0, signature_checks=True):
    """Joins the world (tessera_dist_init): reads the launcher's variables, binds the local GPU.
    Called by the first Mesh; call it yourself to set the collectives' timeout (seconds)."""
    if not _state["init"]:
        _d.init(float(timeout), not signature_checks)
        _state["init"] = True
        atexit.register(_finalize)


def _finalize():
    if _state["init"]:
        _state["mesh"] = None
        _d.finalize()
        _state["init"] = False


def info():
    """rank, world_size, local_rank, launcher, transport, device of this process."""
    init()
    return _d.info()


def rank():
    return info()["rank"]


def world_size():
    return info()["world_size"]


def world_comm():
    init()
    return _d.world()


class Mesh:
    """Named axes over the world's ranks, laid out row-major (the last axis fastest). `devices`
    (any iterable) says how many positions the spec's program wants: it must be the world's size,
    so a program written for 72 GPUs runs on fewer with its device count adjusted."""

    def __init__(self, axes, devices=None, shape=None):
        init()
        axes = [str(a) for a in axes]
        world = _d.info()["world_size"]
        devices = list(devices) if devices is not None else None
        if shape is None:
            if len(axes) != 1:
                raise ValueError(f"tessera.dist.Mesh: a mesh of {len(axes)} axes needs shape=")
            shape = [len(devices) if devices is not None else world]
        shape = [int(s) for s in shape]
        if len(shape) != len(axes):
            raise ValueError(f"tessera.dist.Mesh: {len(axes)} axes but shape {tuple(shape)}")
        n = math.prod(shape)
        if devices is not None and len(devices) != n:
            raise ValueError(f"tessera.dist.Mesh: shape {tuple(shape)} has {n} positions but {len(devices)} devices "
                             "were named")
        if n != world:
            raise ValueError(f"tessera.dist.Mesh: mesh ({', '.join(f'{a}={s}' for a, s in zip(axes, shape))}) has {n} "
                             f"positions but the world has {world} rank(s): start {n} processes (mpirun -n {n}, "
                             f"tessera-run -n {n}, torchrun --nproc-per-node {n}) or adjust the device count")
        self.axes = axes
        self.shape = dict(zip(axes, shape))
        self._mesh = _d.Mesh(axes, shape)
        _state["mesh"] = self

    def axis_size(self, axis):
        return self._mesh.axis_size(axis)

    def coord(self, axis):
        """This rank's coordinate along `axis`."""
        return self._mesh.coord(axis)

    def comm(self, axis):
        return self._mesh.comm(axis)

    def __enter__(self):
        self._previous = _state["mesh"]
        _state["mesh"] = self
        return self

    def __exit__(self, *exc):
        _state["mesh"] = self._previous

    def __repr__(self):
        return f"Mesh({', '.join(f'{a}={s}' for a, s in self.shape.items())})"


def mesh(devices=None, axes=(), shape=None):
    """The spec's dist.mesh(devices=[...], axes=(...), shape=(...))."""
    return Mesh(axes=axes, devices=devices, shape=shape)


def current_mesh(required=False):
    m = _state["mesh"]
    if m is None and required:
        raise ValueError("tessera.dist: no mesh (create one with tessera.dist.Mesh(...) or pass mesh=)")
    return m


class ShardSpec:
    """Which mesh axis partitions which dimension: partition names dimensions as "row" (second to
    last), "col" (last) or an index; mesh_axes the axis of each. Other dimensions are replicated."""

    def __init__(self, partition=(), mesh_axes=()):
        if len(partition) != len(mesh_axes):
            raise ValueError("tessera.dist.ShardSpec: one mesh axis per partitioned dimension")
        self.partition = tuple(partition)
        self.mesh_axes = tuple(mesh_axes)

    def axes_for(self, rank):
        """One mesh axis (or None) per dimension of a tensor of `rank` dimensions."""
        out = [None] * rank
        for dim, axis in zip(self.partition, self.mesh_axes):
            d = {"row": rank - 2, "col": rank - 1}.get(dim, dim)
            if not isinstance(d, int) or not -rank <= d < rank:
                raise ValueError(f"tessera.dist.ShardSpec: dimension {dim!r} of a rank-{rank} tensor")
            d %= rank
            if out[d] is not None:
                raise ValueError(f"tessera.dist.ShardSpec: dimension {d} is partitioned twice")
            out[d] = axis
        return out

    def __repr__(self):
        return f"ShardSpec(partition={self.partition}, mesh_axes={self.mesh_axes})"


class Block(ShardSpec):
    """The spec's dist.Block(mesh_axes=("dp", "tp")): dimension i partitioned over mesh_axes[i],
    the rest replicated."""

    def __init__(self, mesh_axes=()):
        super().__init__(tuple(range(len(mesh_axes))), tuple(mesh_axes))


class Parts:
    """A distributed tensor's parts along a mesh axis: an argument of index_launch."""

    def __init__(self, tensor, axis):
        self.tensor, self.axis = tensor, axis


class DTensor:
    """A distributed tensor: each rank holds its shard, zeroed at creation (libtessera_dist
    allocates it); `.local` is the shard as a tensor of the caller's framework (PyTorch when it
    is importable, else NumPy), sharing its memory."""

    def __init__(self, mesh, name, dtype, shape, layout):
        self.mesh, self.name, self.dtype, self.layout = mesh, name, dtype, layout
        self.shape = tuple(int(s) for s in shape)
        self._t = _d.DTensor(mesh._mesh, name, dtype, list(self.shape), layout.axes_for(len(self.shape)))

    @property
    def local(self):
        from ._module import to_framework
        try:
            import torch  # noqa: F401
            framework = 1
        except ImportError:
            framework = 2
        return to_framework(framework, self._t.local(), ())

    def parts(self, axis):
        """The parts along `axis`, for tessera.index_launch (refused unless `axis` partitions the
        tensor)."""
        self._t.check_parts(axis)
        return Parts(self, axis)

    @property
    def offset(self):
        """Global index of the local shard's first element."""
        return self._t.offset()

    def all_reduce(self, axis, op="sum"):
        """In place: the local shards become op over the ranks of `axis` (which must not partition
        the tensor)."""
        self._t.all_reduce(axis, op)
        return self

    def __repr__(self):
        return f"dist.tensor('{self.name}', {self.dtype}{list(self.shape)}, {self.layout}, {self.mesh})"


def _dtype_name(dtype):
    name = str(dtype).replace("torch.", "")
    return _DTYPE_ALIASES.get(name, name)


def tensor(shape, layout=None, mesh=None, dtype="f32", name=None):
    """A distributed tensor of the global `shape`, laid out by `layout` (a ShardSpec; replicated
    when None) over `mesh` (the current mesh when None). Collective: every rank creates the same
    tensor."""
    mesh = mesh or current_mesh(required=True)
    _state["count"] += 1
    name = name or f"tensor{_state['count']}"
    return DTensor(mesh, name, _dtype_name(dtype), shape, layout or ShardSpec())


def index_launch(axis, mesh=None):
    """tessera.index_launch(axis="tp")(kernel)(args...): every rank launches the kernel once, on
    its parts of the distributed tensors (their .parts(axis) or the tensors themselves) and on
    the other arguments as they are, with the kernel's shape symbols bound from the mesh and the
    global shapes (K from K/tp) and checked."""

    def with_kernel(kernel):
        def launch(*args):
            m = mesh
            plain = []
            for a in args:
                if isinstance(a, Parts):
                    if a.axis != axis:
                        raise ValueError(f"tessera.index_launch(axis='{axis}'): parts along '{a.axis}' of "
                                         f"'{a.tensor.name}'")
                    m = m or a.tensor.mesh
                    plain.append(a.tensor._t)
                elif isinstance(a, DTensor):
                    m = m or a.mesh
                    plain.append(a._t)
                else:
                    plain.append(a)
            m = m or current_mesh(required=True)
            _d.index_launch(m._mesh, axis, kernel, plain)

        return launch

    return with_kernel
