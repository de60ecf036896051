"""Pytrees: nested containers flattened into a list of leaves plus a structure (`PyTreeDef`).

A structure is kept as a nested "spec" tuple, so hashing and comparing treedefs run in C:
a leaf is the `_LEAF` sentinel and a node is `(kind, aux, child_specs)`, where `kind` is the
`_NodeKind` singleton of the node's type and `aux` its hashable metadata (dict keys, the
namedtuple class, a custom node's aux data).  Behaviour (orders, reprs, error texts) follows
JAX 0.10.2's `jax.tree_util`.
"""
from __future__ import annotations

import collections
import dataclasses
import functools
import operator
import textwrap
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
Typ = TypeVar("Typ", bound=type)
Leaf = Any
PyTree = Any
KeyEntry = Any
KeyPath = tuple[Any, ...]


# --------------------------------------------------------------------------------------------
# Key entries: the steps of a key path.
# --------------------------------------------------------------------------------------------

class _KeyEntry:
    """Base of the built-in key entries: one immutable value; equal by class and value."""

    __slots__ = ("_value",)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._value == self._value

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._value))


class SequenceKey(_KeyEntry):
    """Index of a child of a tuple or list, printed as `[i]`."""

    __slots__ = ()
    __match_args__ = ("idx",)

    def __init__(self, idx: int):
        self._value = operator.index(idx)

    @property
    def idx(self) -> int:
        return self._value

    def __repr__(self) -> str:
        return f"SequenceKey(idx={self._value!r})"

    def __str__(self) -> str:
        return f"[{self._value!r}]"


class DictKey(_KeyEntry):
    """Key of a child of a mapping, printed as `['k']`."""

    __slots__ = ()
    __match_args__ = ("key",)

    def __init__(self, key: Hashable):
        self._value = key

    @property
    def key(self) -> Hashable:
        return self._value

    def __repr__(self) -> str:
        return f"DictKey(key={self._value!r})"

    def __str__(self) -> str:
        return f"[{self._value!r}]"


class GetAttrKey(_KeyEntry):
    """Attribute name of a child (namedtuple field, dataclass field), printed as `.name`."""

    __slots__ = ()
    __match_args__ = ("name",)

    def __init__(self, name: str):
        if not isinstance(name, str):
            raise TypeError(f"GetAttrKey name must be a str, got {type(name).__name__}")
        self._value = name

    @property
    def name(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"GetAttrKey(name={self._value!r})"

    def __str__(self) -> str:
        return f".{self._value}"


class FlattenedIndexKey(_KeyEntry):
    """Position of a child of a custom node registered without keys: `[<flat index i>]`."""

    __slots__ = ()
    __match_args__ = ("key",)

    def __init__(self, key: int):
        self._value = operator.index(key)

    @property
    def key(self) -> int:
        return self._value

    def __repr__(self) -> str:
        return f"FlattenedIndexKey(key={self._value!r})"

    def __str__(self) -> str:
        return f"[<flat index {self._value}>]"


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """Joins the string forms of a key path; `simple=True` drops brackets, quotes and dots."""
    return separator.join(map(_simple_entrystr if simple else str, keys))


def _simple_entrystr(key: Any) -> str:
    """A key entry's bare value as a string (any other object: its `str`)."""
    return str(key._value) if isinstance(key, _KeyEntry) else str(key)


# --------------------------------------------------------------------------------------------
# Node kinds: how each node type is split into children, rebuilt, matched, keyed and printed.
# --------------------------------------------------------------------------------------------

class _NodeKind:
    """Behaviour shared by all nodes of one registered type (one instance per type)."""

    __slots__ = ("type",)

    def __init__(self, nodetype: type):
        self.type = nodetype

    def split(self, x: Any) -> tuple[Sequence[Any], Any]:
        """(children, aux) of node `x`, one level deep."""
        raise NotImplementedError

    def split_with_keys(self, x: Any) -> tuple[list[tuple[Any, Any]], Any]:
        """([(key entry, child)], aux) of node `x`."""
        raise NotImplementedError

    def build(self, aux: Any, children: list[Any]) -> Any:
        """Rebuilds a node from its aux data and its (already rebuilt) children."""
        raise NotImplementedError

    def match(self, x: Any, aux: Any, arity: int) -> Sequence[Any]:
        """Children of `x`, after checking that it is a node of this kind, aux and arity."""
        raise NotImplementedError

    def describe(self, aux: Any, children: list[str]) -> str:
        """This node's part of a PyTreeDef repr, given its children's parts."""
        raise NotImplementedError

    def __reduce__(self) -> Any:
        """Unpickles to the live kind of this process (kinds are compared by identity)."""
        for name in ("_NONE", "_TUPLE", "_LIST", "_DICT", "_NAMEDTUPLE"):
            if globals()[name] is self:
                return name
        return (_registered_kind, (self.type,))

    def node_data(self, aux: Any) -> tuple[type, Any]:
        """`PyTreeDef.node_data()` of a node of this kind."""
        return self.type, aux

    def one_level(self, x: Any) -> tuple[Any, Any]:
        """`flatten_one_level(x)`: the children container and the node metadata."""
        return self.split(x)


class _NoneKind(_NodeKind):
    """None: a node without children."""

    __slots__ = ()

    def split(self, x):
        return (), None

    def split_with_keys(self, x):
        return [], None

    def build(self, aux, children):
        return None

    def match(self, x, aux, arity):
        if x is not None:
            raise ValueError(
                f"Expected None, got {x!r}.\n\n"
                "In previous releases of JAX, flatten-up-to used to consider None to be a "
                "tree-prefix of non-None values. To obtain the previous behavior, you can usually "
                "write:\n"
                "  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, "
                "is_leaf=lambda x: x is None)")
        return ()

    def describe(self, aux, children):
        return "None"


class _SequenceKind(_NodeKind):
    """tuple or list (exact types only; subclasses other than namedtuples are leaves)."""

    __slots__ = ()

    def split(self, x):
        return x, None

    def split_with_keys(self, x):
        return [(SequenceKey(i), c) for i, c in enumerate(x)], None

    def build(self, aux, children):
        return children if self.type is list else tuple(children)

    def match(self, x, aux, arity):
        name = self.type.__name__
        if type(x) is not self.type:
            raise ValueError(f"Expected {name}, got {x!r}.")
        if len(x) != arity:
            raise ValueError(
                f"{name.capitalize()} arity mismatch: {len(x)} != {arity}; {name}: {x!r}.")
        return x

    def describe(self, aux, children):
        if self.type is list:
            return f"[{', '.join(children)}]"
        return f"({children[0]},)" if len(children) == 1 else f"({', '.join(children)})"


def _sorted_keys(d: dict) -> list:
    """The keys of `d` in sorted order (JAX's order for dict children)."""
    try:
        return sorted(d)
    except Exception as e:
        raise _key_sort_error() from e


def _key_sort_error() -> ValueError:
    """JAX's error for dict keys that cannot be sorted."""
    return ValueError("Comparator raised exception while sorting pytree dictionary keys.")


class _DictKind(_NodeKind):
    """dict (exact type): children are the values in sorted-key order; aux is the key tuple."""

    __slots__ = ()

    def split(self, x):
        keys = _sorted_keys(x)
        return [x[k] for k in keys], tuple(keys)

    def split_with_keys(self, x):
        keys = _sorted_keys(x)
        return [(DictKey(k), x[k]) for k in keys], tuple(keys)

    def build(self, aux, children):
        return dict(zip(aux, children))

    def match(self, x, aux, arity):
        if type(x) is not dict:
            raise ValueError(f"Expected dict, got {x!r}.")
        keys = _sorted_keys(x)
        if tuple(keys) != aux:
            raise ValueError(
                f"Dict key mismatch; expected keys: {list(aux)!r}; present keys: {keys!r}.")
        return [x[k] for k in keys]

    def describe(self, aux, children):
        return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(aux, children)) + "}"

    def node_data(self, aux):
        return dict, list(aux)

    def one_level(self, x):
        children, aux = self.split(x)
        return tuple(children), aux


class _NamedTupleKind(_NodeKind):
    """Any tuple subclass with `_fields` that is not registered itself; aux is the class."""

    __slots__ = ()

    def split(self, x):
        return x, type(x)

    def split_with_keys(self, x):
        return [(GetAttrKey(f), c) for f, c in zip(x._fields, x)], type(x)

    def build(self, aux, children):
        return aux(*children)

    def match(self, x, aux, arity):
        if not (isinstance(x, tuple) and hasattr(x, "_fields")):
            raise ValueError(f"Expected named tuple, got {x!r}.")
        if len(x) != arity:
            raise ValueError(f"Named tuple arity mismatch: {len(x)} != {arity}; tuple: {x!r}.")
        if type(x) is not aux:
            raise ValueError(f"Named tuple type mismatch: expected type: {aux!r}, tuple: {x!r}.")
        return x

    def describe(self, aux, children):
        return f"CustomNode(namedtuple[{aux.__name__}], [{', '.join(children)}])"

    def node_data(self, aux):
        return aux, None

    def one_level(self, x):
        return list(x), type(x)


class _CustomKind(_NodeKind):
    """A type registered with `register_pytree_node` (or one of its wrappers)."""

    __slots__ = ("_flatten", "_unflatten", "_flatten_with_keys")
    _what = "custom node"

    def __init__(self, nodetype, flatten, unflatten, flatten_with_keys=None):
        super().__init__(nodetype)
        self._flatten, self._unflatten = flatten, unflatten
        self._flatten_with_keys = flatten_with_keys

    def split(self, x):
        return _checked_split(self._flatten(x))

    def split_with_keys(self, x):
        if self._flatten_with_keys is None:
            children, aux = self.split(x)
            return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux
        pairs, aux = _checked_split(self._flatten_with_keys(x))
        return list(pairs), aux

    def build(self, aux, children):
        return self._unflatten(aux, tuple(children))

    def match(self, x, aux, arity):
        if type(x) is not self.type:
            raise ValueError(
                f"{self._what.capitalize()} type mismatch: expected type: {self.type!r}, "
                f"value: {x!r}.")
        children, x_aux = self.split(x)
        if aux != x_aux:
            raise ValueError(f"Mismatch {self._what} data: {aux!r} != {x_aux!r}; value: {x!r}.")
        children = list(children)
        if len(children) != arity:
            raise ValueError(
                f"Custom type arity mismatch: {len(children)} != {arity}; value: {x!r}.")
        return children

    def describe(self, aux, children):
        return f"CustomNode({self.type.__name__}[{aux}], [{', '.join(children)}])"


def _checked_split(result: Any) -> tuple[Iterable[Any], Any]:
    """Validates what a custom flatten function returned: a (children iterable, aux) pair."""
    if not (isinstance(result, tuple) and len(result) == 2):
        raise ValueError("The to_iterable function for a custom PyTree node should return a "
                         f"(children, aux_data) tuple, got {result!r}")
    children = result[0]
    if not isinstance(children, (list, tuple)):
        try:
            children = list(children)
        except TypeError:
            raise ValueError(
                "The to_iterable function for a custom PyTree node should return a "
                f"(children, aux_data) tuple where 'children' is iterable, got {result!r}"
            ) from None
    return children, result[1]


class _DataclassKind(_CustomKind):
    """A type registered with `register_dataclass`: data fields are children, meta fields aux."""

    __slots__ = ("_data_fields", "_meta_fields")
    _what = "custom dataclass node"

    def __init__(self, nodetype, data_fields: tuple[str, ...], meta_fields: tuple[str, ...]):
        super().__init__(nodetype, None, None)
        self._data_fields, self._meta_fields = data_fields, meta_fields

    def split(self, x):
        return ([getattr(x, name) for name in self._data_fields],
                tuple(getattr(x, name) for name in self._meta_fields))

    def split_with_keys(self, x):
        children, aux = self.split(x)
        return [(GetAttrKey(n), c) for n, c in zip(self._data_fields, children)], aux

    def build(self, aux, children):
        return self.type(**dict(zip(self._meta_fields, aux)),
                         **dict(zip(self._data_fields, children)))


_NONE = _NoneKind(type(None))
_TUPLE = _SequenceKind(tuple)
_LIST = _SequenceKind(list)
_DICT = _DictKind(dict)
_NAMEDTUPLE = _NamedTupleKind(tuple)

# type -> kind, for every registered node type (namedtuples are recognised separately).
_kinds: dict[type, _NodeKind] = {type(None): _NONE, tuple: _TUPLE, list: _LIST, dict: _DICT}


class _LeafMarker:
    """Type of `_LEAF`, the spec of a leaf."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "*"

    def __reduce__(self) -> str:
        return "_LEAF"  # the one marker, found by name when unpickled


_LEAF = _LeafMarker()
_NONE_SPEC = (_NONE, None, ())
_EMPTY_DICT_SPEC = (_DICT, (), ())


def _registered_kind(nodetype: type) -> _NodeKind:
    """The kind registered for `nodetype` (unpickling a PyTreeDef holding such nodes)."""
    try:
        return _kinds[nodetype]
    except KeyError:
        raise ValueError(f"Unknown custom type in pickled PyTreeDef: {nodetype}") from None


def _kind_of(x: Any) -> _NodeKind | None:
    """The kind of node `x` is, or None when `x` is a leaf."""
    kind = _kinds.get(type(x))
    if kind is None and isinstance(x, tuple) and hasattr(x, "_fields"):
        return _NAMEDTUPLE
    return kind


def is_registered_node(nodetype: type) -> bool:
    """True if `nodetype` itself is registered (None, tuple, list, dict or a registered type)."""
    return nodetype in _kinds


# --------------------------------------------------------------------------------------------
# Flattening.
# --------------------------------------------------------------------------------------------

def _flatten(x: Any, leaves: list) -> Any:
    """Appends the leaves of `x` to `leaves` and returns its spec (hot path: no is_leaf, no keys).

    A child is recursed into when its type is registered or it is a tuple (maybe a namedtuple).
    Tuples and lists of leaves only are taken in one go; dicts get their own copy of the child
    loop, which saves building a list of values.
    """
    t = type(x)
    if t is tuple or t is list:
        for c in x:
            if type(c) in _kinds or isinstance(c, tuple):
                break
        else:
            leaves.extend(x)
            return _TUPLE if t is tuple else _LIST, None, (_LEAF,) * len(x)
        kind, aux, children = _TUPLE if t is tuple else _LIST, None, x
    elif t is dict:
        if not x:
            return _EMPTY_DICT_SPEC
        try:
            keys = sorted(x)
        except Exception as e:
            raise _key_sort_error() from e
        specs = []
        for k in keys:
            c = x[k]
            if type(c) in _kinds or isinstance(c, tuple):
                specs.append(_flatten(c, leaves))
            else:
                leaves.append(c)
                specs.append(_LEAF)
        return _DICT, tuple(keys), tuple(specs)
    elif x is None:
        return _NONE_SPEC
    else:
        kind = _kinds.get(t)
        if kind is None:
            if not (isinstance(x, tuple) and hasattr(x, "_fields")):
                leaves.append(x)
                return _LEAF
            kind = _NAMEDTUPLE
        children, aux = kind.split(x)
    specs = []
    for c in children:
        if type(c) in _kinds or isinstance(c, tuple):
            specs.append(_flatten(c, leaves))
        else:
            leaves.append(c)
            specs.append(_LEAF)
    return kind, aux, tuple(specs)


def _is_leaf_verdict(result: Any) -> bool:
    """Reads an is_leaf predicate's answer: True, False or None, anything else is an error."""
    if result is True:
        return True
    if result is False or result is None:
        return False
    raise ValueError(
        f"is_leaf predicate returned a non-boolean value {result!r}; expected a boolean")


def _flatten_general(x: Any, leaves: list, is_leaf: Callable | None, path: KeyPath | None) -> Any:
    """Flattening honouring `is_leaf`; with a key `path`, appends (path, leaf) pairs instead.

    With a path, `is_leaf` is called as `is_leaf(path, x)`, otherwise as `is_leaf(x)`.
    """
    keyed = path is not None
    if is_leaf is not None and _is_leaf_verdict(is_leaf(path, x) if keyed else is_leaf(x)):
        kind = None
    else:
        kind = _kind_of(x)
    if kind is None:
        leaves.append((path, x) if keyed else x)
        return _LEAF
    if keyed:
        pairs, aux = kind.split_with_keys(x)
        specs = [_flatten_general(c, leaves, is_leaf, (*path, k)) for k, c in pairs]
    else:
        children, aux = kind.split(x)
        specs = [_flatten_general(c, leaves, is_leaf, None) for c in children]
    return kind, aux, tuple(specs)


def _build(spec: Any, next_leaf: Callable[[], Any]) -> Any:
    """Rebuilds the node described by `spec` (not a leaf), taking leaves from `next_leaf()`.

    Builds dicts, tuples and lists inline (hot path: jit outputs).
    """
    kind, aux, children = spec
    if kind is _DICT:
        out = {}
        for k, c in zip(aux, children):
            out[k] = next_leaf() if c is _LEAF else _build(c, next_leaf)
        return out
    vals = []
    for c in children:
        vals.append(next_leaf() if c is _LEAF else _build(c, next_leaf))
    if kind is _TUPLE:
        return tuple(vals)
    return vals if kind is _LIST else kind.build(aux, vals)


def _flatten_up_to(spec: Any, x: Any, out: list) -> None:
    """Appends to `out`, last first, the subtrees of `x` at the leaves of `spec`.

    Visits children right to left, as JAX does, so that the same mismatch gets reported.
    """
    kind, aux, children = spec
    matched = kind.match(x, aux, len(children))
    for c_spec, c in zip(reversed(children), reversed(matched)):
        if c_spec is _LEAF:
            out.append(c)
        else:
            _flatten_up_to(c_spec, c, out)


def _describe(spec: Any) -> str:
    """The repr body of a spec, e.g. `[*, {'a': *}]`."""
    if spec is _LEAF:
        return "*"
    kind, aux, children = spec
    return kind.describe(aux, [_describe(c) for c in children])


def _count_leaves(spec: Any) -> int:
    """Number of leaves in a spec."""
    if spec is _LEAF:
        return 1
    return sum(_count_leaves(c) for c in spec[2])


def _count_nodes(spec: Any) -> int:
    """Number of nodes in a spec, leaves included."""
    if spec is _LEAF:
        return 1
    return 1 + sum(_count_nodes(c) for c in spec[2])


def _without_aux(spec: Any) -> Any:
    """The spec with every aux dropped: a hashable stand-in when some aux is unhashable."""
    if spec is _LEAF:
        return spec
    return spec[0], tuple(_without_aux(c) for c in spec[2])


def _substitute_leaves(spec: Any, inner: Any) -> Any:
    """`spec` with every leaf replaced by the spec `inner`."""
    if spec is _LEAF:
        return inner
    kind, aux, children = spec
    return kind, aux, tuple(_substitute_leaves(c, inner) for c in children)


def _from_iterable_tree(spec: Any, xs: Any) -> Any:
    """Builds a tree from nested iterables that give each node's children in flattened order."""
    if spec is _LEAF:
        return xs
    kind, aux, children = spec
    items = list(xs)
    if len(items) != len(children):
        raise ValueError("Arity mismatch between trees")
    return kind.build(aux, [_from_iterable_tree(c, x) for c, x in zip(children, items)])


# --------------------------------------------------------------------------------------------
# PyTreeDef.
# --------------------------------------------------------------------------------------------

class PyTreeDef:
    """The structure of a pytree: every node with its metadata, and where the leaves go.

    Hashable and comparable; made by `tree_flatten`/`tree_structure`, not constructed directly.
    """

    __slots__ = ("_spec", "_num_leaves", "_hash")

    def __init__(self, spec: Any, num_leaves: int):
        self._spec = spec
        self._num_leaves = num_leaves
        self._hash = None

    @property
    def num_leaves(self) -> int:
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        return _count_nodes(self._spec)

    def children(self) -> list[PyTreeDef]:
        """Treedefs of the root's children (none for a leaf)."""
        if self._spec is _LEAF:
            return []
        return [_treedef(c) for c in self._spec[2]]

    def node_data(self) -> tuple[type, Any] | None:
        """(node type, metadata) of the root, or None for a leaf."""
        if self._spec is _LEAF:
            return None
        kind, aux, _ = self._spec
        return kind.node_data(aux)

    def unflatten(self, leaves: Iterable[Any], /) -> Any:
        """Builds the pytree of this structure holding `leaves` in order."""
        if type(leaves) is not list and type(leaves) is not tuple:
            leaves = list(leaves)
        n = self._num_leaves
        if len(leaves) != n:
            if len(leaves) < n:
                raise ValueError(f"Too few leaves for PyTreeDef; expected {n}, got {len(leaves)}")
            raise ValueError(f"Too many leaves for PyTreeDef; expected {n}.")
        if self._spec is _LEAF:
            return leaves[0]
        return _build(self._spec, iter(leaves).__next__)

    def flatten_up_to(self, tree: Any, /) -> list[Any]:
        """The subtrees of `tree` at the positions of this structure's leaves.

        Raises ValueError if this structure is not a prefix of `tree`'s structure.
        """
        if self._spec is _LEAF:
            return [tree]
        out: list = []
        _flatten_up_to(self._spec, tree, out)
        out.reverse()
        return out

    def compose(self, inner: PyTreeDef, /) -> PyTreeDef:
        """The structure of this tree with every leaf replaced by a tree of structure `inner`."""
        return PyTreeDef(_substitute_leaves(self._spec, inner._spec),
                         self._num_leaves * inner._num_leaves)

    def from_iterable_tree(self, xs: Any, /) -> Any:
        """Builds a tree of this structure from nested iterables of children (and leaves)."""
        return _from_iterable_tree(self._spec, xs)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not PyTreeDef:
            return False
        try:
            return self._spec == other._spec
        except Exception as e:
            raise ValueError(
                "Exception raised while checking equality of metadata fields of pytree. Make sure "
                "that metadata fields are hashable and have simple equality semantics. (Note: "
                "arrays cannot be passed as metadata fields!)") from e

    def __reduce__(self) -> Any:
        return (PyTreeDef, (self._spec, self._num_leaves))

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            try:
                h = hash(self._spec)
            except TypeError:
                h = hash(_without_aux(self._spec))
            self._hash = h
        return h

    def __repr__(self) -> str:
        return f"PyTreeDef({_describe(self._spec)})"


def _treedef(spec: Any) -> PyTreeDef:
    """A PyTreeDef for a spec whose leaf count is not known yet."""
    return PyTreeDef(spec, _count_leaves(spec))


# --------------------------------------------------------------------------------------------
# Public flatten / unflatten API.
# --------------------------------------------------------------------------------------------

# Treedefs of flat tuples of n leaves, shared: jit's argument tuples flatten and hash fast.
_flat_tuple_treedefs: dict[int, PyTreeDef] = {}


def _flat_tuple_treedef(n: int) -> PyTreeDef:
    treedef = _flat_tuple_treedefs.get(n)
    if treedef is None:
        treedef = _flat_tuple_treedefs[n] = PyTreeDef((_TUPLE, None, (_LEAF,) * n), n)
    return treedef


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Leaf], PyTreeDef]:
    """Flattens a pytree into its leaves (in JAX's order) and its structure."""
    if type(tree) is tuple and is_leaf is None:
        for c in tree:
            if type(c) in _kinds or isinstance(c, tuple):
                break
        else:
            return list(tree), _flat_tuple_treedef(len(tree))
    leaves: list = []
    if is_leaf is None:
        spec = _flatten(tree, leaves)
    else:
        spec = _flatten_general(tree, leaves, is_leaf, None)
    return leaves, PyTreeDef(spec, len(leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Leaf]) -> Any:
    """Builds the pytree of structure `treedef` holding `leaves`."""
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Leaf]:
    """The leaves of a pytree, in flattening order."""
    leaves: list = []
    if is_leaf is None:
        _flatten(tree, leaves)
    else:
        _flatten_general(tree, leaves, is_leaf, None)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The structure (PyTreeDef) of a pytree."""
    return tree_flatten(tree, is_leaf)[1]


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose children have the given structures."""
    treedefs = list(treedefs)
    return PyTreeDef((_TUPLE, None, tuple(t._spec for t in treedefs)),
                     sum(t._num_leaves for t in treedefs))


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """Treedefs of the root's immediate children."""
    return treedef.children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True if the structure has a single node (a leaf, or an empty container such as None)."""
    spec = treedef._spec
    return spec is _LEAF or not spec[2]


def treedef_is_strict_leaf(treedef: PyTreeDef) -> bool:
    """True if the structure is exactly one leaf."""
    return treedef._spec is _LEAF


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True if every element of `iterable` is a leaf (None is not: it is an empty node)."""
    if is_leaf is None:
        return all(_kind_of(x) is None for x in iterable)
    items = list(iterable)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves))


def is_tree_node(typ: type) -> bool:
    """True if instances of `typ` are pytree nodes (registered types and namedtuple classes)."""
    return typ in _kinds or (issubclass(typ, tuple) and hasattr(typ, "_fields"))


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """(children, metadata) of a pytree node; ValueError for a leaf."""
    kind = _kind_of(tree)
    if kind is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return kind.one_level(tree)


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[KeyEntry, Any]], Hashable]:
    """([(key, child)], metadata) of a pytree node; ValueError for a leaf."""
    kind = _kind_of(tree)
    if kind is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    pairs, aux = kind.split_with_keys(tree)
    # JAX gives built-in nodes' pairs as a tuple, the others' as a list.
    return (pairs if isinstance(kind, (_CustomKind, _NamedTupleKind)) else tuple(pairs)), aux


# --------------------------------------------------------------------------------------------
# Mapping, reducing, transposing.
# --------------------------------------------------------------------------------------------

def _unflatten_exact(treedef: PyTreeDef, leaves: list) -> Any:
    """`treedef.unflatten` for a list already known to hold `num_leaves` leaves."""
    spec = treedef._spec
    return leaves[0] if spec is _LEAF else _build(spec, iter(leaves).__next__)


def _flatten_rest(treedef: PyTreeDef, tree: Any, rest: tuple, is_leaf: Callable | None,
                  name: str) -> list[list]:
    """`flatten_up_to` of each tree in `rest`, with JAX's key-path error when one does not fit.

    `is_leaf`, if given, takes (path, x); `name` is how errors refer to the first tree.
    """
    out = []
    for other in rest:
        try:
            out.append(treedef.flatten_up_to(other))
        except Exception as e:
            err = next(_prefix_errors((), tree, other, is_leaf), None)
            raise (err(name) if err is not None else e) from None
    return out


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Applies `f` leafwise; `rest` trees must have `tree`'s structure as a prefix."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return _unflatten_exact(treedef, [f(x) for x in leaves])
    path_is_leaf = None if is_leaf is None else (lambda _, x: is_leaf(x))
    others = _flatten_rest(treedef, tree, rest, path_is_leaf, "tree_map tree")
    return _unflatten_exact(treedef, [f(*xs) for xs in zip(leaves, *others)])


class Unspecified:
    """Type of the default of optional arguments for which None is a meaningful value."""

    def __repr__(self) -> str:
        return "Unspecified()"


_UNSPECIFIED = Unspecified()


def tree_reduce(function: Callable[[T, Any], T], tree: Any, initializer: Any = _UNSPECIFIED,
                is_leaf: Callable[[Any], bool] | None = None) -> T:
    """`functools.reduce` over the leaves (with `initializer` when one is given)."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _UNSPECIFIED:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def _parallel_reduce(seq: list, operation: Callable, identity: Any) -> Any:
    """Balanced binary reduction of `seq` with an associative `operation`."""
    if not seq:
        if identity is _UNSPECIFIED:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    if len(seq) == 1:
        return seq[0]
    mid = len(seq) // 2
    return operation(_parallel_reduce(seq[:mid], operation, identity),
                     _parallel_reduce(seq[mid:], operation, identity))


def tree_reduce_associative(operation: Callable[[T, T], T], tree: Any, *,
                            identity: Any = _UNSPECIFIED,
                            is_leaf: Callable[[Any], bool] | None = None) -> T:
    """Reduces the leaves pairwise in a balanced tree, for an associative `operation`."""
    return _parallel_reduce(tree_leaves(tree, is_leaf), operation, identity)


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True if every leaf is truthy."""
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Turns a tree of structure outer∘inner into one of structure inner∘outer."""
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner_size, outer_size = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        raise TypeError(f"Mismatch\n{treedef}\n != \n{outer_treedef.compose(inner_treedef)}")
    rows = [flat[i * inner_size:(i + 1) * inner_size] for i in range(outer_size)]
    return inner_treedef.unflatten(outer_treedef.unflatten(col) for col in zip(*rows))


def build_tree(treedef: PyTreeDef, xs: Any) -> Any:
    """Builds a tree of structure `treedef` from nested iterables of each node's children."""
    return treedef.from_iterable_tree(xs)


# --------------------------------------------------------------------------------------------
# Key paths.
# --------------------------------------------------------------------------------------------

def _path_is_leaf(is_leaf: Callable | None, takes_path: bool) -> Callable | None:
    """`is_leaf` as a function of (path, x)."""
    if is_leaf is None or takes_path:
        return is_leaf
    return lambda _, x: is_leaf(x)


def tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                           is_leaf_takes_path: bool = False
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Like `tree_flatten`, but each leaf comes with its key path."""
    pairs: list = []
    spec = _flatten_general(tree, pairs, _path_is_leaf(is_leaf, is_leaf_takes_path), ())
    return pairs, PyTreeDef(spec, len(pairs))


def tree_leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                          is_leaf_takes_path: bool = False) -> list[tuple[KeyPath, Any]]:
    """(key path, leaf) pairs of a pytree."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """Like `tree_map`, but `f` also receives each leaf's key path as first argument."""
    path_is_leaf = _path_is_leaf(is_leaf, is_leaf_takes_path)
    pairs, treedef = tree_flatten_with_path(tree, path_is_leaf, True)
    others = _flatten_rest(treedef, tree, rest, path_is_leaf, "tree_map_with_path tree")
    paths, leaves = [p for p, _ in pairs], [x for _, x in pairs]
    return _unflatten_exact(treedef, [f(*args) for args in zip(paths, leaves, *others)])


# --------------------------------------------------------------------------------------------
# Prefix errors: explaining why one tree is not a prefix of another.
# --------------------------------------------------------------------------------------------

def prefix_errors(prefix_tree: Any, full_tree: Any,
                  is_leaf: Callable[[Any], bool] | None = None
                  ) -> list[Callable[[str], ValueError]]:
    """Makers of ValueErrors (given the prefix tree's name) for each place the prefix differs."""
    return list(_prefix_errors((), prefix_tree, full_tree, _path_is_leaf(is_leaf, False)))


def _prefix_errors(path: KeyPath, prefix: Any, full: Any, is_leaf: Callable | None
                   ) -> Iterator[Callable[[str], ValueError]]:
    """Yields an error maker for each mismatch between `prefix` and the top of `full`.

    `is_leaf`, if given, takes (path, x).
    """
    if is_leaf is not None and _is_leaf_verdict(is_leaf(path, prefix)):
        return
    kind = _kind_of(prefix)
    if kind is None:
        return  # a leaf is a prefix of anything
    where = keystr(path)
    if type(prefix) is not type(full):
        yield lambda name: ValueError(
            "pytree structure error: different types at key path\n"
            f"    {name}{where}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix)}\n"
            "but at the same key path the full pytree has a subtree of different type\n"
            f"    {type(full)}.")
        return
    p_pairs, p_aux = kind.split_with_keys(prefix)
    f_pairs, f_aux = kind.split_with_keys(full)
    if isinstance(prefix, (list, tuple)):
        if len(prefix) != len(full):
            yield _length_error(where, type(prefix).__name__, len(prefix), len(full))
            return
    elif len(p_pairs) != len(f_pairs):
        yield _children_error(where, type(prefix), [k for k, _ in p_pairs], [k for k, _ in f_pairs])
        return
    if p_aux != f_aux:
        yield _metadata_error(where, type(prefix), p_aux, f_aux)
        return
    for (k, p_child), (_, f_child) in zip(p_pairs, f_pairs):
        yield from _prefix_errors((*path, k), p_child, f_child, is_leaf)


def _length_error(where: str, type_name: str, n_prefix: int, n_full: int
                  ) -> Callable[[str], ValueError]:
    """Error maker: a list or tuple has different lengths in the two trees."""
    return lambda name: ValueError(
        f"pytree structure error: different lengths of {type_name} at key path\n"
        f"    {name}{where}\n"
        f"At that key path, the prefix pytree {name} has a subtree of type {type_name} of length "
        f"{n_prefix}, but the full pytree has a subtree of the same type but of length {n_full}.")


def _children_error(where: str, typ: type, p_keys: list, f_keys: list
                    ) -> Callable[[str], ValueError]:
    """Error maker: a node has different numbers of children in the two trees."""
    try:
        diff = " ".join(map(_simple_entrystr, set(p_keys) ^ set(f_keys)))
        diff_text = f"so the symmetric difference on key sets is\n    {diff}"
    except TypeError:  # unhashable keys
        diff_text = ""
    return lambda name: ValueError(
        "pytree structure error: different numbers of pytree children at key path\n"
        f"    {name}{where}\n"
        f"At that key path, the prefix pytree {name} has a subtree of type\n"
        f"    {typ}\n"
        f"with {len(p_keys)} child keys\n"
        f"    {' '.join(map(_simple_entrystr, p_keys))}\n"
        "but at the same key path the full pytree has a subtree of the same type but with "
        f"{len(f_keys)} child keys\n"
        f"    {' '.join(map(_simple_entrystr, f_keys))}\n" + diff_text)


def _metadata_error(where: str, typ: type, p_aux: Any, f_aux: Any) -> Callable[[str], ValueError]:
    """Error maker: a node has different metadata in the two trees, with a line diff."""
    p_text, f_text = str(p_aux), str(f_aux)
    import difflib  # only for this error message (issue 16: a fast `import`)
    diff = textwrap.indent("\n".join(difflib.ndiff(p_text.splitlines(), f_text.splitlines())),
                           prefix="    ")
    return lambda name: ValueError(
        "pytree structure error: different pytree metadata at key path\n"
        f"    {name}{where}\n"
        f"At that key path, the prefix pytree {name} has a subtree of type\n"
        f"    {typ}\n"
        "with metadata\n"
        f"    {p_text}\n"
        "but at the same key path the full pytree has a subtree of the same type but with "
        "metadata\n"
        f"    {f_text}\n"
        "so the diff in the metadata at these pytree nodes is\n"
        f"{diff}")


def broadcast_prefix(prefix_tree: Any, full_tree: Any,
                     is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """Leaves of `prefix_tree`, each repeated once per leaf of its subtree in `full_tree`."""
    result: list = []
    leaves, treedef = tree_flatten(prefix_tree, is_leaf)
    try:
        subtrees = treedef.flatten_up_to(full_tree)
    except ValueError:
        errors = prefix_errors(prefix_tree, full_tree, is_leaf)
        if not errors:
            raise
        raise errors[0]("broadcast_prefix prefix_tree") from None
    for leaf, subtree in zip(leaves, subtrees):
        result.extend([leaf] * len(tree_leaves(subtree)))
    return result


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """`full_tree`'s structure, with each leaf taken from the matching leaf of `prefix_tree`."""
    return tree_structure(full_tree).unflatten(broadcast_prefix(prefix_tree, full_tree, is_leaf))


# --------------------------------------------------------------------------------------------
# Registration.
# --------------------------------------------------------------------------------------------

def _register(kind: _CustomKind) -> None:
    """Adds a node kind to the registry; a type can be registered once."""
    if kind.type in _kinds:
        what = "custom dataclass " if isinstance(kind, _DataclassKind) else "custom "
        raise ValueError(f"Duplicate {what}PyTreeDef type registration for {kind.type}.")
    _kinds[kind.type] = kind


def register_pytree_node(nodetype: type[T],
                         flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]],
                         unflatten_func: Callable[[Hashable, Iterable[Any]], T],
                         flatten_with_keys_func: Callable[[T], tuple[Iterable[tuple[Any, Any]],
                                                                     Hashable]] | None = None
                         ) -> None:
    """Makes `nodetype` a pytree node (registering a type twice is a ValueError).

    `flatten_func(x) -> (children, aux)`, `unflatten_func(aux, children) -> x`; the optional
    `flatten_with_keys_func(x) -> ([(key, child)], aux)` gives the children's key-path entries.
    """
    _register(_CustomKind(nodetype, flatten_func, unflatten_func, flatten_with_keys_func))


def register_pytree_with_keys(nodetype: type[T],
                              flatten_with_keys: Callable[[T], tuple[Iterable[tuple[Any, Any]],
                                                                     Hashable]],
                              unflatten_func: Callable[[Hashable, Iterable[Any]], T],
                              flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]] | None
                              = None) -> None:
    """Makes `nodetype` a pytree node whose children carry keys; `flatten_func` is optional."""
    if flatten_func is None:
        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls: Typ) -> Typ:
    """Class decorator: registers `cls` by its `tree_flatten` method and `tree_unflatten`
    classmethod."""
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: Typ) -> Typ:
    """Class decorator: registers `cls` by its `tree_flatten_with_keys` method (and `tree_flatten`
    if defined) and its `tree_unflatten` classmethod."""
    flatten = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                              cls.tree_unflatten, flatten)
    return cls


def register_dataclass(nodetype: Typ, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> Typ:
    """Registers a class whose `data_fields` are children and `meta_fields` static metadata.

    For a dataclass both lists may be omitted: fields with `metadata={'static': True}` are meta
    fields, the others data fields.  Usable as a decorator.
    """
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: data_fields and meta_fields must both be specified"
                            f" when either is specified. Got {data_fields=} {meta_fields=}.")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required when"
                            f" nodetype is not a dataclass. Got {nodetype=}.")
        fields = dataclasses.fields(nodetype)
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        _check_dataclass_fields(nodetype, data_fields, meta_fields, drop_fields)
    if overlap := set(data_fields) & set(meta_fields):
        raise ValueError("data_fields and meta_fields must not overlap. Overlapping fields:"
                         f" {overlap}.")
    _register(_DataclassKind(nodetype, data_fields, meta_fields))
    return nodetype


def _check_dataclass_fields(nodetype: type, data_fields: tuple, meta_fields: tuple,
                            drop_fields: Sequence[str]) -> None:
    """The given fields must be exactly the dataclass's `init=True` fields minus `drop_fields`."""
    init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
    given = {*data_fields, *meta_fields}
    if given == init_fields:
        return
    msg = ("data_fields and meta_fields must include all dataclass fields with ``init=True`` and "
           "only them.")
    if missing := init_fields - given:
        msg += f" Missing fields: {missing}. Add them to drop_fields to suppress this error."
    if unexpected := given - init_fields:
        msg += f" Unexpected fields: {unexpected}."
    raise ValueError(msg)


def static(**kwargs: Any) -> Any:
    """`dataclasses.field(**kwargs)` marked `static=True`: a meta field for register_dataclass."""
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)


def register_static(cls: Typ) -> Typ:
    """Registers `cls` as a node without children: instances become static metadata."""
    register_pytree_with_keys(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


class _Registry:
    """The process-wide pytree registry, with JAX's `default_registry` methods."""

    def flatten(self, tree: Any, is_leaf: Callable[[Any], bool] | None = None
                ) -> tuple[list[Leaf], PyTreeDef]:
        return tree_flatten(tree, is_leaf)

    def flatten_with_path(self, tree: Any, is_leaf: Callable[[Any, Any], bool] | None = None
                          ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
        return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path=True)

    def flatten_one_level(self, tree: Any) -> tuple[Iterable[Any], Hashable] | None:
        kind = _kind_of(tree)
        return None if kind is None else kind.one_level(tree)

    def flatten_one_level_with_keys(self, tree: Any
                                    ) -> tuple[Iterable[tuple[KeyEntry, Any]], Hashable] | None:
        return None if _kind_of(tree) is None else flatten_one_level_with_keys(tree)

    def is_node(self, typ: type) -> bool:
        return is_tree_node(typ)

    def __repr__(self) -> str:
        return "default_registry"


default_registry = _Registry()


def _flatten_defaultdict_with_keys(d: collections.defaultdict):
    """Children in sorted-key order; aux is (default_factory, keys)."""
    keys = tuple(_sorted_keys(d))
    return tuple((DictKey(k), d[k]) for k in keys), (d.default_factory, keys)


def _flatten_ordereddict_with_keys(d: collections.OrderedDict):
    """Children in insertion order; aux is the keys."""
    keys = tuple(d)
    return tuple((DictKey(k), d[k]) for k in keys), keys


register_pytree_with_keys(
    collections.OrderedDict, _flatten_ordereddict_with_keys,
    lambda keys, values: collections.OrderedDict(zip(keys, values)))
register_pytree_with_keys(
    collections.defaultdict, _flatten_defaultdict_with_keys,
    lambda aux, values: collections.defaultdict(aux[0], zip(aux[1], values)))


# --------------------------------------------------------------------------------------------
# Partial.
# --------------------------------------------------------------------------------------------

class _HashableCallableShim:
    """Wraps a functools.partial used as Partial's func, so that partial does not merge it away."""

    def __init__(self, fun: Callable):
        self.fun = fun

    def __call__(self, *args, **kw):
        return self.fun(*args, **kw)

    def __hash__(self) -> int:
        return hash(self.fun)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _HashableCallableShim):
            return self.fun == other.fun
        return self.fun == other

    def __repr__(self) -> str:
        return f"_HashableCallableShim({self.fun!r})"


class Partial(functools.partial):
    """A functools.partial that is a pytree: `func` is static metadata, the bound args children."""

    def __new__(cls, func: Callable, *args: Any, **kw: Any):
        if not isinstance(func, functools.partial):
            return super().__new__(cls, func, *args, **kw)
        shim = _HashableCallableShim(func)
        out = super().__new__(cls, shim, *args, **kw)
        # Expose the wrapped partial's parts, as JAX does; only now, because the pure-Python
        # functools.partial unwraps any `func` that has a `func` attribute.
        shim.func, shim.args, shim.keywords = func.func, func.args, func.keywords
        return out


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]))
