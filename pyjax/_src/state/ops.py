"""Mutable array references: `new_ref`, `freeze`, and reads/writes through NumPy indices.

Primitives, as JAX prints them:  `b:Ref{f32[3]} = new_ref[kind=None memory_space=None] a`,
`c:f32[2] <- b[1:]` (get), `b[0] <- d` (swap whose old value nobody reads; otherwise
`e:f32[], b[0] <- b[0], d`), `b[...] += d` (addupdate), `e:f32[3] = freeze b`.

An index is kept as a static `indexer` param (one entry per indexed axis: an int, a
`Slice(start, size, stride)`, `DYNAMIC`, which takes the next integer-array operand, or a
`DynSlice(size, stride)` of a `jax.ds` whose start is traced, which takes it as operand), so
static indices print in the equation and traced indices are operands.  Every reference
primitive is effectful: equations that write are never dropped as dead code, and the executor
runs them in program order on the reference's NumPy buffer.
"""
from __future__ import annotations

import operator
from typing import Any, NamedTuple

import numpy as np

from pyjax._src import dslice
from pyjax._src.backend.dispatch import to_buffer, wrap
from pyjax._src.core import dtypes
from pyjax._src.core import pretty as pp
from pyjax._src.core.array import Array, ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import DropVar, Literal, PrintContext, pp_atom, pp_vars
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.trace import Tracer
from pyjax._src.state.types import AbstractRef, TransformedRef


class Slice(NamedTuple):
    """A static slice of one axis: `size` elements from `start`, every `stride`-th."""
    start: int
    size: int
    stride: int


DYNAMIC = "dynamic"  # an axis indexed by an integer-array operand


class DynSlice(NamedTuple):
    """A `jax.ds` slice of one axis whose start is the next index operand (a traced scalar):
    `size` elements, every `stride`-th; the start wraps once if negative and is then clamped
    so the window fits, as the dynamic_slice JAX lowers it to does."""
    size: int
    stride: int


class _RefMeta(type):
    """`isinstance(x, jax.Ref)` holds for concrete references and for tracers of one."""

    def __instancecheck__(cls, inst: Any) -> bool:
        return (type.__instancecheck__(cls, inst)
                or isinstance(inst, Tracer) and isinstance(inst.aval, AbstractRef))


class Ref(metaclass=_RefMeta):
    """A mutable array: a reference's concrete value (`jax.Ref`).  It owns a private NumPy
    buffer that the reference primitives read and write in place."""

    __slots__ = ("_aval", "_buf")

    def __init__(self, aval: AbstractRef, buf: np.ndarray):
        self._aval, self._buf = aval, buf

    aval = property(lambda self: self._aval)
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: self._aval.ndim)
    size = property(lambda self: self._aval.size)

    def __getitem__(self, idx: Any) -> Any:
        return ref_get(self, idx)

    def __setitem__(self, idx: Any, value: Any) -> None:
        ref_set(self, idx, value)

    def __len__(self) -> int:
        return self._aval._len(self)

    def addupdate(self, x: Any, idx: Any = ()) -> None:
        ref_addupdate(self, idx, x)

    def __repr__(self) -> str:
        return "Ref" + repr(ArrayImpl(self._buf.copy(), self._aval.inner_aval.weak_type))[5:]

    __hash__ = object.__hash__


def typeof(x: Any) -> Any:
    """The abstract value of an operand of a reference primitive."""
    if type(x) is Ref:
        return x._aval
    from pyjax._src.transforms.staging import abstractify
    return abstractify(x)


# -- indices --------------------------------------------------------------------------------
def _is_int_array(x: Any) -> bool:
    return (isinstance(x, (Array, np.ndarray, np.generic)) and not isinstance(x, Ref)
            and dtypes.issubdtype(x.dtype, np.integer))


def parse_index(shape: tuple[int, ...], idx: Any) -> tuple[tuple, list]:
    """(static indexer, dynamic index operands) of a NumPy-style index into `shape`."""
    if idx is None or idx is Ellipsis or (type(idx) is tuple and not idx):
        return (), []
    idx = idx if type(idx) is tuple else (idx,)
    if any(i is None for i in idx):
        raise TypeError("Indexing a reference with None (a new axis) is not supported.")
    n_ellipsis = sum(i is Ellipsis for i in idx)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_ellipsis:
        at = next(k for k, i in enumerate(idx) if i is Ellipsis)
        fill = (slice(None),) * (len(shape) - len(idx) + 1)
        idx = idx[:at] + fill + idx[at + 1:]
    if len(idx) > len(shape):
        raise IndexError(f"Too many indices for reference: {len(idx)} non-None/Ellipsis "
                         f"indices for dim {len(shape)}.")
    idx = idx + (slice(None),) * (len(shape) - len(idx))
    indexer, dynamic = [], []
    for i, dim in zip(idx, shape):
        if isinstance(i, dslice.Slice):
            _ds_entry(i, dim, indexer, dynamic)
        elif isinstance(i, slice):
            start, stop, step = i.indices(dim)
            indexer.append(Slice(start, len(range(start, stop, step)), step))
        elif type(i) is bool or isinstance(i, (bool, np.bool_)):
            raise TypeError("Indexing a reference with a boolean is not supported.")
        elif isinstance(i, (int, np.integer)):
            if not -dim <= int(i) < dim:
                raise IndexError(f"index {int(i)} is out of bounds for axis with size {dim}")
            indexer.append(int(i))
        elif _is_int_array(i):
            indexer.append(DYNAMIC)
            dynamic.append(i)
        else:
            raise TypeError(f"Invalid index for a reference: {i!r} of type {type(i)}.")
    return tuple(indexer), dynamic


def _ds_entry(s: Any, dim: int, indexer: list, dynamic: list) -> None:
    """The indexer entry (and operand) of a jax.ds Slice on an axis of `dim` elements; a start
    known now is checked as JAX checks it and becomes a static Slice."""
    if s.is_dynamic_size:
        raise TypeError(f"A reference index's slice size must be static: got {s}")
    size, stride = operator.index(s.size), s.stride
    if s.is_dynamic_start:
        indexer.append(DynSlice(size, stride))
        dynamic.append(s.start)
        return
    start = operator.index(s.start)
    if start:  # (JAX's check, which a zero start skips)
        if start >= dim:
            raise ValueError(f"Out of bound slice: start={start}, dim={dim}.")
        if size and start + (size - 1) * stride >= dim:
            raise ValueError(f"Out of bound slice: start={start}, size={size}, "
                             f"stride={stride}, dim={dim}.")
    indexer.append(Slice(_window_start(start, size, stride, dim), size, stride))


def _window_start(start: int, size: int, stride: int, dim: int) -> int:
    """A slice start as dynamic_slice takes it: wrapped once if negative, then clamped so the
    window of `size` elements `stride` apart fits in `dim`."""
    if start < 0:
        start += dim
    span = (size - 1) * stride + 1 if size else 0
    return min(max(start, 0), max(dim - span, 0))


def _numpy_index(indexer: tuple, dynamic: list, shape: tuple | None = None) -> tuple:
    it = iter(dynamic)
    out = []
    for axis, entry in enumerate(indexer):
        if entry is DYNAMIC:
            out.append(next(it))
        elif type(entry) is DynSlice:
            value = next(it)
            start = _window_start(int(value), entry.size, entry.stride, shape[axis]) \
                if np.ndim(value) == 0 and shape is not None else 0
            out.append(slice(start, start + (entry.size - 1) * entry.stride + 1 if entry.size
                             else start, entry.stride))
        elif type(entry) is Slice:
            stop = entry.start + entry.size * entry.stride
            out.append(slice(entry.start, stop if stop >= 0 else None, entry.stride))
        else:
            out.append(entry)
    return tuple(out)


def indexed_shape(shape: tuple[int, ...], indexer: tuple, index_avals: list) -> tuple:
    """The shape `ref[indexer]` reads: NumPy's rules, computed on a zero-strided view."""
    if not indexer:
        return shape
    view = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), shape, (0,) * len(shape))
    dummy = [np.zeros(a.shape, np.intp) for a in index_avals]
    return view[_numpy_index(indexer, dummy, shape)].shape


def _read(ref: Ref, indexer: tuple, dynamic: tuple) -> np.ndarray:
    if not indexer:
        return ref._buf.copy()
    return np.array(ref._buf[_numpy_index(indexer, list(dynamic), ref._buf.shape)])


# -- new_ref ----------------------------------------------------------------------------------
def _new_ref_abstract_eval(init: ShapedArray, *, kind: Any, memory_space: Any) -> AbstractRef:
    return AbstractRef(init, memory_space=memory_space, kind=kind)


def _new_ref_impl(init: np.ndarray, *, kind: Any, memory_space: Any, weak: bool = False) -> Ref:
    if memory_space is not None:
        raise NotImplementedError("array ref with memory space only works inside of a `jit`.")
    aval = ShapedArray(init.shape, init.dtype, weak)
    return Ref(AbstractRef(aval, kind=kind), np.array(init, copy=True))


# -- get, swap, addupdate -------------------------------------------------------------------
def _check_ref(aval: Any, name: str) -> AbstractRef:
    if not isinstance(aval, AbstractRef):
        raise ValueError(f"`{name}` must be called on `Ref` types: {aval}.")
    return aval


def _get_abstract_eval(ref: Any, *index_avals: ShapedArray, indexer: tuple) -> ShapedArray:
    ref = _check_ref(ref, "get")
    inner = ref.inner_aval
    return ShapedArray(indexed_shape(inner.shape, indexer, list(index_avals)), inner.dtype,
                       inner.weak_type)


def _get_impl(ref: Ref, *index: np.ndarray, indexer: tuple) -> np.ndarray:
    return _read(ref, indexer, index)


def _write_check(name: str, ref: AbstractRef, value: ShapedArray, indexer: tuple,
                 index_avals: tuple) -> ShapedArray:
    expected = indexed_shape(ref.shape, indexer, list(index_avals))
    if tuple(value.shape) != expected:
        raise ValueError(f"Invalid shape for `{name}`. Ref shape: {ref.shape}. Expected shape: "
                         f"{expected}. Value shape: {tuple(value.shape)}. "
                         f"Transforms: {_transforms_text(indexer)}. ")
    if value.dtype != ref.dtype:
        # JAX words the addupdate message "Value shape:" for the dtype; so do we
        what = "Value dtype" if name == "swap" else "Value shape"
        raise ValueError(f"Invalid dtype for `{name}`. Ref dtype: {ref.dtype}. "
                         f"{what}: {value.dtype}. ")
    return ShapedArray(expected, ref.dtype, ref.inner_aval.weak_type)


def _transforms_text(indexer: tuple) -> str:
    return "()" if not indexer else f"(NDIndexer({indexer}),)"


def _swap_abstract_eval(ref: Any, value: ShapedArray, *index_avals: ShapedArray,
                        indexer: tuple) -> ShapedArray:
    return _write_check("swap", _check_ref(ref, "swap"), value, indexer, index_avals)


def _swap_impl(ref: Ref, value: np.ndarray, *index: np.ndarray, indexer: tuple) -> np.ndarray:
    old = _read(ref, indexer, index)
    if indexer:
        ref._buf[_numpy_index(indexer, list(index), ref._buf.shape)] = value
    else:
        ref._buf[...] = value
    return old


def _addupdate_abstract_eval(ref: Any, value: ShapedArray, *index_avals: ShapedArray,
                             indexer: tuple) -> list:
    _write_check("addupdate", _check_ref(ref, "addupdate"), value, indexer, index_avals)
    return []


def _addupdate_impl(ref: Ref, value: np.ndarray, *index: np.ndarray, indexer: tuple) -> list:
    if indexer:
        np.add.at(ref._buf, _numpy_index(indexer, list(index), ref._buf.shape), value)
    else:
        ref._buf += value
    return []


# -- freeze -----------------------------------------------------------------------------------
def _freeze_abstract_eval(ref: Any) -> ShapedArray:
    return _check_ref(ref, "freeze").inner_aval


def _freeze_impl(ref: Ref) -> np.ndarray:
    return ref._buf.copy()


# -- printing ---------------------------------------------------------------------------------
def _pp_index_atom(atom: Any, context: PrintContext) -> str:
    if type(atom) is Literal:  # JAX prints an index literal without its dtype
        return str(np.asarray(atom.val).item())
    return pp_atom(atom, context)


def _pp_slice(entry: Slice, dim: int) -> str:
    start = "" if entry.start == 0 else str(entry.start)
    end = entry.start + entry.size
    return f"{start}:{'' if end == dim else end}"


def pp_ref(ref_atom: Any, indexer: tuple, index_atoms: list, context: PrintContext) -> str:
    """`b[1:,c]`: a reference and its index as JAX prints them."""
    if not indexer:
        return pp_atom(ref_atom, context) + "[...]"
    it = iter(index_atoms)
    parts = []
    for entry, dim in zip(indexer, ref_atom.aval.shape):
        if entry is DYNAMIC:
            parts.append(_pp_index_atom(next(it), context))
        elif type(entry) is DynSlice:  # (JAX prints neither clamping nor the stride)
            start = _pp_index_atom(next(it), context)
            parts.append(f"{start}:{start}+{entry.size}")
        elif type(entry) is Slice:
            parts.append(_pp_slice(entry, dim))
        else:
            parts.append(str(entry))
    return f"{pp_atom(ref_atom, context)}[{','.join(parts)}]"


def _get_pp(eqn: Any, context: PrintContext) -> pp.Doc:
    ref, *index = eqn.invars
    lhs = pp_vars(eqn.outvars, context, print_shapes=True)
    return pp.concat([lhs, pp.text(" <- " + pp_ref(ref, eqn.params["indexer"], index, context))])


def _swap_pp(eqn: Any, context: PrintContext) -> pp.Doc:
    ref, value, *index = eqn.invars
    (out,) = eqn.outvars
    target = pp_ref(ref, eqn.params["indexer"], index, context)
    if type(out) is DropVar or context.name(out) == "_":
        return pp.text(f"{target} <- {pp_atom(value, context)}")
    lhs = pp_vars([out], context, print_shapes=True)
    return pp.concat([lhs, pp.text(f", {target} <- {target}, {pp_atom(value, context)}")])


def _addupdate_pp(eqn: Any, context: PrintContext) -> pp.Doc:
    ref, value, *index = eqn.invars
    target = pp_ref(ref, eqn.params["indexer"], index, context)
    return pp.text(f"{target} += {pp_atom(value, context)}")


# -- eager evaluation ---------------------------------------------------------------------------
def _eager(prim: Primitive, args: tuple, params: dict) -> Any:
    """Concrete references are mutated in place; arrays are read as buffers."""
    out_aval = prim.abstract_eval(*[typeof(x) for x in args], **params)
    bufs = [x if type(x) is Ref else to_buffer(x)[0] for x in args]
    if prim is new_ref_p:
        return _new_ref_impl(*bufs, **params, weak=out_aval.inner_aval.weak_type)
    out = prim.impl(*bufs, **params)
    if prim.multiple_results:
        return [wrap(b, a) for b, a in zip(out, out_aval)]
    return wrap(out, out_aval)


def _make(name: str, abstract_eval: Any, impl: Any, pp_rule: Any = None,
          multiple_results: bool = False) -> Primitive:
    prim = Primitive(name, multiple_results=multiple_results)
    prim.abstract_eval, prim.impl, prim.pp_rule = abstract_eval, impl, pp_rule
    prim.eager = _eager
    prim.effectful = True
    return prim


new_ref_p = _make("new_ref", _new_ref_abstract_eval, _new_ref_impl)
get_p = _make("get", _get_abstract_eval, _get_impl, _get_pp)
swap_p = _make("swap", _swap_abstract_eval, _swap_impl, _swap_pp)
addupdate_p = _make("addupdate", _addupdate_abstract_eval, _addupdate_impl, _addupdate_pp,
                    multiple_results=True)
freeze_p = _make("freeze", _freeze_abstract_eval, _freeze_impl)


# -- the API ----------------------------------------------------------------------------------
def new_ref(init_val: Any, *, memory_space: Any = None, kind: Any = None) -> Any:
    """A mutable array reference holding a copy of `init_val`."""
    return new_ref_p.bind(init_val, kind=kind, memory_space=memory_space)


def freeze(ref: Any) -> Any:
    """The reference's final value, as an Array."""
    return freeze_p.bind(ref)


def _ref_and_index(ref: Any, idx: Any, name: str) -> tuple[Any, tuple, list]:
    if isinstance(ref, TransformedRef):
        ref, idx = ref.ref, ref.index if idx is None or idx is Ellipsis or idx == () else idx
    aval = typeof(ref)
    if not isinstance(aval, AbstractRef):
        raise ValueError(f"Can only call `{name}` on a `Ref`: {ref}.")
    indexer, dynamic = parse_index(aval.shape, idx)
    return ref, indexer, dynamic


def _implicit_cast(dtype: np.dtype, value: Any) -> Any:
    """Weak floats into float references and integers into integer references convert to the
    reference's dtype (JAX's `_maybe_implicit_cast`, with its operator precedence)."""
    try:
        aval = typeof(value)
    except TypeError:
        return value
    if not isinstance(aval, ShapedArray):
        return value
    floats = (dtypes.issubdtype(dtype, np.floating)
              and dtypes.issubdtype(aval.dtype, np.floating))
    ints = dtypes.issubdtype(dtype, np.integer) and dtypes.issubdtype(aval.dtype, np.integer)
    if (aval.weak_type and floats) or ints:
        from pyjax._src.primitives.elementwise import convert_element_type
        return convert_element_type(value, dtype)
    return value


def ref_get(ref: Any, idx: Any = None) -> Any:
    """`ref[idx]`."""
    ref, indexer, dynamic = _ref_and_index(ref, idx, "ref_get")
    return get_p.bind(ref, *dynamic, indexer=indexer)


def ref_swap(ref: Any, idx: Any, value: Any, _function_name: str = "ref_swap") -> Any:
    """Write `value` at `ref[idx]`, returning what was there."""
    if hasattr(ref, "dtype"):
        value = _implicit_cast(ref.dtype, value)
    ref, indexer, dynamic = _ref_and_index(ref, idx, _function_name)
    return swap_p.bind(ref, value, *dynamic, indexer=indexer)


def ref_set(ref: Any, idx: Any, value: Any) -> None:
    """`ref[idx] = value`."""
    ref_swap(ref, idx, value, "ref_set")


def ref_addupdate(ref: Any, idx: Any, x: Any) -> None:
    """`ref[idx] += x`, as one accumulation."""
    ref, indexer, dynamic = _ref_and_index(ref, idx, "ref_addupdate")
    addupdate_p.bind(ref, x, *dynamic, indexer=indexer)
