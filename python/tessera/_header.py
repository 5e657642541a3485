"""Reads what the package needs from a module's generated header (`tesserac -H`, docs/abi.md):
the kernels' names (the runtime's registry has the rest of their metadata) and the host
functions' entry points with their Tessera signatures, whose result types give the shapes of
the results (the graph's shape rules, evaluated on the arguments' shapes)."""
import ast
import re
from dataclasses import dataclass, field

_DECL = re.compile(r"/\* ((?:(?!\*/).)*)\*/\s*tessera_status (\w+)\(const tessera_launch_options \*opts(.*?)\);", re.S)


@dataclass
class KernelDecl:
    name: str  # the kernel's source name (the registry's key)
    symbol: str  # its launch stub
    signature: str


@dataclass
class TensorType:
    dtype: str
    shape: list  # extent texts: "S", "3*E", "ceil_div(N, 256)", "128"


@dataclass
class EntryParam:
    name: str
    kind: str  # "tensor" or the scalar's dtype
    privilege: str = "read"  # read, write, reduce_sum, ...
    type: TensorType = None

    @property
    def rank(self):
        return len(self.type.shape) if self.type else 0


@dataclass
class EntryDecl:
    name: str
    symbol: str
    signature: str
    params: list = field(default_factory=list)
    results: list = field(default_factory=list)  # TensorType per result
    capture_graph: bool = False


@dataclass
class Header:
    prefix: str  # the C prefix of every symbol: the module's name
    kernels: list
    entries: list


def split_top(text, sep=","):
    """`text` split at `sep` outside (), [] and <>."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([<":
            depth += 1
        elif ch in ")]>":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    tail = "".join(cur).strip()
    if tail:
        parts.append(tail)
    return parts


def parse_type(text):
    """`tensor<f32, [M, 3*E]>` -> TensorType; a scalar dtype -> its name (str)."""
    text = text.strip()
    m = re.fullmatch(r"tensor<\s*(\w+)\s*,\s*\[(.*)\]\s*>", text, re.S)
    if not m:
        return text
    return TensorType(m.group(1), split_top(m.group(2)))


def _parse_entry(signature, symbol):
    m = re.fullmatch(r"(\w+)\((.*)\) -> \((.*)\)", signature.strip(), re.S)
    if not m:
        raise ValueError(f"unexpected host function signature in the header: {signature!r}")
    entry = EntryDecl(m.group(1), symbol, signature.strip())
    for p in split_top(m.group(2)):
        name, _, typ = p.partition(":")
        typ = typ.strip()
        privilege = "read"
        head, _, rest = typ.partition(" ")
        if head in ("write", "reduce_sum", "reduce_max", "reduce_min") and rest:
            privilege, typ = head, rest
        t = parse_type(typ)
        if isinstance(t, TensorType):
            entry.params.append(EntryParam(name.strip(), "tensor", privilege, t))
        else:
            entry.params.append(EntryParam(name.strip(), t))
    entry.results = [parse_type(r) for r in split_top(m.group(3))]
    return entry


def parse_header(text):
    kernels, entries = [], []
    for comment, symbol, params in _DECL.findall(text):
        first = comment.strip().splitlines()[0].strip()
        if "Host function" in comment:
            e = _parse_entry(first, symbol)
            e.capture_graph = "capture_graph" in comment
            n_c = len([p for p in params.split(",") if p.strip()])
            if n_c != len(e.params) + len(e.results):
                raise ValueError(f"header: {symbol} declares {n_c} arguments, its signature {len(e.params)} "
                                 f"parameters and {len(e.results)} results")
            entries.append(e)
        else:
            m = re.match(r"(\w+)\(", first)
            if m:
                kernels.append(KernelDecl(m.group(1), symbol, first.rstrip(".")))
    named = [(k.symbol, k.name) for k in kernels] + [(e.symbol, e.name) for e in entries]
    prefix = ""
    if named:
        sym, name = named[0]
        prefix = sym[: -(len(name) + 1)] if sym.endswith("_" + name) else sym.rsplit("_", 1)[0]
    return Header(prefix, kernels, entries)


# Extents are integer expressions over the shape symbols: + - * / % and ceil_div (docs/graph.md).
_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.Div: lambda a, b: a // b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}


def eval_extent(text, symbols):
    """The value of extent `text` with `symbols` bound (ints, or PyTorch SymInts under
    torch.compile); KeyError names an unbound symbol."""

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            return symbols[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "ceil_div" and len(node.args) == 2:
            a, b = ev(node.args[0]), ev(node.args[1])
            return -((-a) // b)
        raise ValueError(f"unsupported extent {text!r}")

    return ev(ast.parse(text, mode="eval"))


def bind_symbols(entry, shapes):
    """The shape symbols bound by the parameters' extents (the first parameter axis that names a
    symbol binds it, docs/abi.md section 10); `shapes` has one shape (or None) per parameter."""
    bound = {}
    for p, shape in zip(entry.params, shapes):
        if p.type is None or shape is None:
            continue
        for ext, size in zip(p.type.shape, shape):
            if re.fullmatch(r"[A-Za-z_]\w*", ext) and ext not in bound:
                bound[ext] = size
    return bound


def result_shapes(entry, shapes):
    """Each result's shape for parameters of `shapes` (a rank-0 result: ())."""
    bound = bind_symbols(entry, shapes)
    return [tuple(eval_extent(e, bound) for e in r.shape) for r in entry.results]
