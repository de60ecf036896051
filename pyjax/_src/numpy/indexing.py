"""NumPy-style indexing: `x[idx]`, `x.at[idx].set/add/...`, `jnp.take`, `jnp.take_along_axis`.

An index is parsed into entries (one per component, with the array axes it consumes), then
lowered as jnp does: a static `slice` (+ `rev`, `squeeze`, `broadcast_in_dim`) when every
component is static, else a `dynamic_slice` when components are scalars or unit-step slices,
else a `gather` (or, for `.at` updates, a `scatter`) whose index array is assembled from the
advanced and scalar components.  Concrete arrays take a NumPy fast path for basic indices
and for one integer index array (`x[idx]` by np.take, `x.at[idx].add(1.)` by ufunc.at); its
results match the lowered path's, including JAX's clamping of out-of-range static ints and
gather indices, the scatter's dropping of out-of-range updates and its flushed subnormals.
"""
from __future__ import annotations

import math
import operator
import warnings
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from pyjax._src.backend.eager_plans import planned
from pyjax._src.backend.fp_mode import KEPT, SWITCHED, flush_off, flush_on, run_flushing
from pyjax._src.core.trace_state import note_side_effect
from pyjax._src import caches, errors
from pyjax._src.config import config
from pyjax._src.core import dtypes, primitive
from pyjax._src.core.array import Array, ArrayImpl
from pyjax._src.core.trace import Tracer, trace_state
from pyjax._src.dslice import Slice
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy import util
from pyjax._src.primitives import elementwise as ew
from pyjax._src.primitives import indexing as ix
from pyjax._src.primitives import shape as shp

Mode = ix.GatherScatterMode

# Kinds of index components.
NONE, ELLIPSIS, SLICE, INTEGER, BOOLEAN, ARRAY, DYNAMIC_SLICE = (
    "none", "ellipsis", "slice", "integer", "boolean", "array", "dynamic_slice")


class Entry(NamedTuple):
    """One parsed index component and the array axes it consumes."""

    index: Any
    kind: str
    axes: tuple[int, ...]


# ---------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------

def _as_tuple(index: Any) -> tuple:
    """The index as a tuple; a bare list or other non-tuple sequence is rejected, as in JAX."""
    if isinstance(index, tuple):
        return index
    if isinstance(index, Sequence) and not isinstance(index, (Array, np.ndarray, str)):
        if any(_unpacks(i) for i in index):
            hint = "use `arr[tuple(seq)]` instead of `arr[seq]`"
        else:
            hint = "use `arr[array(seq)]` instead of `arr[seq]`"
        raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                        f"allowed; {hint}. See https://github.com/jax-ml/jax/issues/4564 for "
                        "more information.")
    return (index,)


def _unpacks(x: Any) -> bool:
    """Whether a list item makes NumPy read the list as a tuple of indices."""
    return ((isinstance(x, (np.ndarray, Array)) and np.ndim(x) != 0)
            or isinstance(x, (Sequence, slice)) or x is Ellipsis or x is None)


def _is_int(x: Any) -> bool:
    """A static integer index (Python or NumPy int, not bool)."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_scalar(x: Any) -> bool:
    """A Python/NumPy scalar or a 0-d array."""
    return np.isscalar(x) or (isinstance(x, (np.ndarray, Array)) and np.ndim(x) == 0)


def _is_bool_index(x: Any) -> bool:
    """A boolean scalar, boolean array, or non-empty list of boolean scalars."""
    if isinstance(x, (bool, np.bool_)):
        return True
    if isinstance(x, (Array, np.ndarray)):
        return np.dtype(x.dtype) == dtypes.bool_
    return (isinstance(x, list) and bool(x)
            and all(_is_scalar(e) and dtypes.dtype_and_weak(e)[0] == dtypes.bool_ for e in x))


def _sequence_dtype(seq: Sequence) -> np.dtype:
    """The dtype `jnp.asarray(seq)` would have (without building it)."""
    leaves = lnp._leaves(list(seq))
    return dtypes.result_type(*leaves) if leaves else dtypes.default_float_dtype()


def _kind(idx: Any) -> str:
    """Classify one index component (raising JAX's errors for unsupported ones)."""
    if idx is None:
        return NONE
    if idx is Ellipsis:
        return ELLIPSIS
    if isinstance(idx, slice):
        return SLICE
    if isinstance(idx, Slice):  # jax.ds
        return DYNAMIC_SLICE
    if _is_int(idx):
        return INTEGER
    if _is_bool_index(idx):
        return BOOLEAN
    if isinstance(idx, (Array, np.ndarray)):
        if dtypes.is_integer(np.dtype(idx.dtype)):
            return ARRAY
        raise TypeError("Indexer must have integer or boolean type, got indexer with type "
                        f"{np.dtype(idx.dtype)}")
    if isinstance(idx, str):
        raise TypeError(f"JAX does not support string indexing; got {idx=}")
    if isinstance(idx, Sequence):
        if not idx:
            return ARRAY
        dtype = _sequence_dtype(idx)
        if dtype == dtypes.bool_:
            return BOOLEAN
        if dtypes.is_integer(dtype):
            return ARRAY
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                        f"{dtype}")
    if isinstance(idx, (float, complex, np.generic)):
        raise TypeError("Indexer must have integer or boolean type, got indexer with type "
                        f"{np.dtype(type(idx))}")
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and "
                     f"integer or boolean arrays are valid indices. Got {idx}")


def parse(index: Any, shape: Sequence[int]) -> list[Entry]:
    """Parse a user index against an array shape into entries with their consumed axes."""
    components = _as_tuple(index)
    kinds = [_kind(i) for i in components]
    consumed = [0 if k in (NONE, ELLIPSIS) else np.ndim(i) if k == BOOLEAN else 1
                for i, k in zip(components, kinds)]
    ellipses = [n for n, k in enumerate(kinds) if k == ELLIPSIS]
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    total = sum(consumed)
    if total > len(shape):
        raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but {total} "
                         "were indexed")
    if ellipses:
        consumed[ellipses[0]] = len(shape) - total
    entries, axis = [], 0
    for i, k, n in zip(components, kinds, consumed):
        entries.append(Entry(i, k, tuple(range(axis, axis + n))))
        axis += n
    return entries


def _expand_ellipsis(entries: list[Entry], ndim: int) -> list[Entry]:
    """Replace the ellipsis, and the axes left unindexed at the end, by full slices."""
    out, consumed = [], 0
    for e in entries:
        consumed += len(e.axes)
        if e.kind == ELLIPSIS:
            out.extend(Entry(slice(None), SLICE, (a,)) for a in e.axes)
        else:
            out.append(e)
    out.extend(Entry(slice(None), SLICE, (a,)) for a in range(consumed, ndim))
    return out


def _concrete(x: Any) -> Any:
    """The value of `x` if it is known now (not an abstract tracer), else None."""
    if isinstance(x, Tracer):
        return x.concrete_value()
    return x


def _validate_slices(entries: list[Entry]) -> None:
    """Slices must have static (concrete) start, stop and step."""
    for pos, e in enumerate(entries):
        if e.kind == SLICE and any(v is not None and _concrete(v) is None
                                   for v in (e.index.start, e.index.stop, e.index.step)):
            raise IndexError(f"Slice entries must be static integers. Got {e.index} at "
                             f"position {pos}")


def _index_dtype(shape: Sequence[int]) -> np.dtype:
    """int32 unless an axis is too long for it (lax's int_dtype_for_shape)."""
    return dtypes.int64 if any(d > np.iinfo(np.int32).max for d in shape) else dtypes.int32


def _parse_mode(mode: Any) -> Mode:
    """A gather mode; None means PROMISE_IN_BOUNDS."""
    return Mode.PROMISE_IN_BOUNDS if mode is None else Mode.from_any(mode)


# ---------------------------------------------------------------------------------------------
# Static slicing
# ---------------------------------------------------------------------------------------------

class _StaticPlan(NamedTuple):
    starts: list
    limits: list
    strides: list | None
    rev_axes: list
    squeeze_axes: list
    newaxis_dims: list


def _static_plan(entries: list[Entry], shape: tuple, mode: Any, normalize: bool) -> _StaticPlan:
    """The static slice for an index of ints, slices, None and Ellipsis (else raise)."""
    parsed = _parse_mode(mode)
    if parsed not in (Mode.PROMISE_IN_BOUNDS, Mode.CLIP):
        raise ValueError("static_slice requires mode='promise_in_bounds' or mode='clip'")
    if parsed == Mode.PROMISE_IN_BOUNDS:
        _validate_static_ints(entries, shape, normalize)
    _validate_slices(entries)
    for pos, e in enumerate(entries):
        if e.kind in (ARRAY, BOOLEAN, DYNAMIC_SLICE):
            raise TypeError("static_slice: indices must be static scalars or slices. Got index "
                            f"of type {type(e.index)} at position {pos}")
    starts, limits, strides, rev, squeeze, newaxis = [], [], [], [], [], []
    for e in _expand_ellipsis(entries, len(shape)):
        if e.kind == NONE:
            newaxis.append(len(starts) - len(squeeze) + len(newaxis))
            continue
        axis, = e.axes
        size = shape[axis]
        if e.kind == INTEGER:
            if size == 0:
                raise IndexError(f"index is out of bounds for axis {axis} with size 0")
            start = int(e.index)
            if normalize and start < 0:
                start += size
            start = min(max(start, 0), size - 1)
            starts.append(start)
            limits.append(start + 1)
            strides.append(1)
            squeeze.append(axis)
        else:
            start, stop, step = e.index.indices(size)
            if step < 0:
                first = min(size, stop + 1 + abs(start - stop - 1) % -step)
                starts.append(first)
                limits.append(max(first, start + 1))
                strides.append(-step)
                rev.append(axis)
            else:
                starts.append(start)
                limits.append(max(start, stop))
                strides.append(step)
    return _StaticPlan(starts, limits, None if all(s == 1 for s in strides) else strides,
                       rev, squeeze, newaxis)


def _validate_static_ints(entries: list[Entry], shape: tuple, normalize: bool) -> None:
    """Static ints must be in bounds for the static-slice lowering (else it does not apply)."""
    for e in entries:
        if e.kind == INTEGER:
            i = operator.index(e.index)
            axis, = e.axes
            size = shape[axis]
            normed = i + size if normalize and i < 0 else i
            if not 0 <= normed < size:
                raise IndexError(f"index {i} out of bounds for axis {axis} with size {size} "
                                 f"(normalize_indices={normalize})")


def _apply_static(arr: Any, plan: _StaticPlan) -> Any:
    """slice (unless trivial), then rev, squeeze and expand_dims as the plan says."""
    shape = np.shape(arr)
    trivial = plan.strides is None and all(
        (lo, hi) == (0, n) for lo, hi, n in zip(plan.starts, plan.limits, shape))
    result = arr if trivial else shp.slice(arr, plan.starts, plan.limits, plan.strides)
    return _reshape_after_slice(result, plan)


def _reshape_after_slice(result: Any, plan: Any) -> Any:
    """Apply a slice plan's reversals, squeezed axes and new axes, in JAX's order."""
    if plan.rev_axes:
        result = shp.rev(result, plan.rev_axes)
    if plan.squeeze_axes:
        result = shp.squeeze(result, plan.squeeze_axes)
    if plan.newaxis_dims:
        result = shp.expand_dims(result, plan.newaxis_dims)
    return result


# ---------------------------------------------------------------------------------------------
# Dynamic slicing
# ---------------------------------------------------------------------------------------------

class _DynamicPlan(NamedTuple):
    starts: list
    sizes: list
    rev_axes: list
    squeeze_axes: list
    newaxis_dims: list
    trivial: bool


def _check_dynamic_entries(entries: list[Entry], mode: Any) -> None:
    """Raise unless every component suits the dynamic-slice lowering."""
    if mode is not None and Mode.from_any(mode) not in (Mode.PROMISE_IN_BOUNDS, Mode.CLIP):
        raise ValueError("dynamic_slice requires mode='promise_in_bounds' or mode='clip'")
    for pos, e in enumerate(entries):
        if e.kind == SLICE and e.index.step is not None and e.index.step not in (-1, 1) or (
                e.kind == DYNAMIC_SLICE and e.index.stride != 1):
            raise TypeError("dynamic_slice: only unit steps supported in slice. Got "
                            f"{e.index} at position {pos}")
        if e.kind == ARRAY and (isinstance(e.index, Sequence) or np.shape(e.index) != ()):
            raise TypeError("dynamic_slice: only scalar indices allowed. Got index of type "
                            f"{type(e.index)} at position {pos}")
        if e.kind == BOOLEAN:
            raise TypeError("dynamic_slice: indices must be scalars or slices. Got index of "
                            f"type {type(e.index)} at position {pos}")


def _dynamic_plan(entries: list[Entry], shape: tuple, mode: Any) -> _DynamicPlan:
    """The dynamic slice for an index of scalars and unit-step slices (else raise)."""
    _check_dynamic_entries(entries, mode)
    starts, sizes, rev, squeeze, newaxis = [], [], [], [], []
    trivial = True
    for e in _expand_ellipsis(entries, len(shape)):
        if e.kind == NONE:
            newaxis.append(len(starts) - len(squeeze) + len(newaxis))
            continue
        axis, = e.axes
        size = shape[axis]
        if e.kind in (INTEGER, ARRAY):
            trivial = False
            index = lnp.asarray(e.index)
            if size == 0:
                raise IndexError(f"index is out of bounds for axis {axis} with size 0")
            starts.append(index)
            sizes.append(1)
            squeeze.append(axis)
            continue
        if e.kind == DYNAMIC_SLICE:  # (start as given: dynamic_slice wraps and clamps it)
            starts.append(e.index.start)
            sizes.append(e.index.size)
            trivial = False
            continue
        if e.index != slice(None):
            trivial = False
        start, stop, step = e.index.indices(size)
        if step < 0:
            first = stop + 1 + abs(start - stop - 1) % -step
            starts.append(first)
            sizes.append(max(0, start + 1 - first))
            rev.append(axis)
        else:
            starts.append(start)
            sizes.append(max(0, stop - start))
    if len(starts) > 1:
        dtype = _index_dtype(shape)
        starts = [ew.convert_element_type(i, dtype) for i in starts]
    return _DynamicPlan(starts, sizes, rev, squeeze, newaxis, trivial)


def _apply_dynamic(arr: Any, plan: _DynamicPlan, normalize: bool) -> Any:
    """dynamic_slice (unless trivial), then rev, squeeze and expand_dims."""
    result = arr if plan.trivial else ix.dynamic_slice(arr, plan.starts, plan.sizes,
                                                       allow_negative_indices=normalize)
    return _reshape_after_slice(result, plan)


# ---------------------------------------------------------------------------------------------
# Gather indices
# ---------------------------------------------------------------------------------------------

def expand_bool_indices(entries: list[Entry], shape: tuple) -> list[Entry]:
    """Boolean masks become the integer index arrays of their True entries (masks must be
    concrete); scalar booleans are kept for the gather plan."""
    out = []
    for pos, e in enumerate(entries):
        if e.kind != BOOLEAN:
            out.append(e)
            continue
        value = _concrete(e.index)
        if value is None:
            raise errors.NonConcreteBooleanIndexError(e.index)
        if np.ndim(value) == 0:
            out.append(Entry(bool(value), BOOLEAN, ()))
            continue
        mask = np.asarray(value)
        expected = [shape[a] for a in e.axes]
        if not all(s in (0, t) for s, t in zip(mask.shape, expected)):
            raise IndexError("boolean index did not match shape of indexed array in index "
                             f"{pos}: got {mask.shape}, expected {expected}")
        out.extend(Entry(i, ARRAY, (a,)) for i, a in zip(np.where(mask), e.axes))
    return out


def _expand_scalar_bools(entries: list[Entry], shape: tuple) -> tuple[list[Entry], tuple]:
    """Scalar booleans become a new size-1 axis indexed by arange(int(flag))."""
    new_shape, out, dim = list(shape), [], 0
    for n, e in enumerate(entries):
        if e.kind == BOOLEAN:
            new_shape.insert(n, 1)
            out.append(Entry(np.arange(int(e.index)), ARRAY, (dim,)))
            dim += 1
        else:
            out.append(Entry(e.index, e.kind, tuple(range(dim, dim + len(e.axes)))))
            dim += len(e.axes)
    return out, tuple(new_shape)


def _normalize_array(index: Any, size: int) -> Any:
    """index + size where index < 0 (staged as select, as jnp does; NumPy indices are
    compared on the host and enter the program as constants)."""
    dtype = dtypes.dtype_and_weak(index)[0]
    if dtypes.is_unsigned(dtype):
        return index
    size_const = np.array(size, dtype)
    if isinstance(index, np.ndarray):
        operand = util.as_operand(index)
        negative = np.asarray(operand._buf) < 0
        return ew.select(negative, ew.add(operand, size_const), operand)
    return ew.select(index < 0, ew.add(index, size_const), index)


def _normalize_entries(entries: list[Entry], shape: tuple) -> list[Entry]:
    """Wrap negative integer and array indices by their axis size."""
    out = []
    for e in entries:
        if e.kind == INTEGER:
            size = shape[e.axes[0]]
            value = e.index
            if not isinstance(value, np.unsignedinteger) and value < 0:
                value = value + size
            out.append(Entry(value, INTEGER, e.axes))
        elif e.kind == ARRAY:
            out.append(Entry(_normalize_array(e.index, shape[e.axes[0]]), ARRAY, e.axes))
        else:
            out.append(e)
    return out


def _convert_index(x: Any, dtype: np.dtype) -> Any:
    """convert_element_type for index arrays: constant arrays (not scalars) are converted by an
    equation when staged, as JAX does, rather than folded."""
    if (trace_state.trace is not None and type(x) is ArrayImpl and x._buf.ndim
            and (x._buf.dtype != dtype or x._weak)):
        return ew.convert_element_type_p.bind(x, new_dtype=dtype, weak_type=False)
    return ew.convert_element_type(x, dtype)


def _broadcast_to(x: Any, shape: Sequence[int]) -> Any:
    """lax.broadcast_to: one broadcast_in_dim placing x's axes last (no squeeze first)."""
    x = util.as_operand(x)
    old, shape = tuple(np.shape(x)), tuple(int(s) for s in shape)
    if old == shape:
        return x
    if len(shape) < len(old):
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: arr_shape={old} "
                         f"shape={shape}")
    lead = len(shape) - len(old)
    if not all(o in (1, n) for o, n in zip(old, shape[lead:])):
        dtype = dtypes.dtype_name(np.dtype(x.dtype))
        raise ValueError(f"Incompatible types for broadcasting: input type={x.aval} and "
                         f"requested type={dtype}[{','.join(map(str, shape))}]")
    return shp.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def _broadcast_arrays(*arrays: Any) -> list[Any]:
    """The arrays broadcast to their common shape (unchanged when shapes agree)."""
    shapes = [tuple(np.shape(a)) for a in arrays]
    if all(s == shapes[0] for s in shapes):
        return list(arrays)
    try:
        result = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}") from None
    return [_broadcast_to(a, result) for a in arrays]


class GatherPlan(NamedTuple):
    """Everything `_index_to_gather` derives from an index; shared by gather and scatter."""

    slice_shape: list
    gather_slice_shape: list
    gather_indices: Any
    dnums: ix.GatherDimensionNumbers
    unique_indices: bool
    indices_are_sorted: bool
    reversed_y_dims: list
    newaxis_dims: tuple
    scalar_bool_dims: list


def _is_advanced(e: Entry) -> bool:
    """An array index of rank >= 1 (it triggers NumPy advanced indexing)."""
    return e.kind in (ARRAY, BOOLEAN) and np.ndim(e.index) > 0


def gather_plan(entries: list[Entry], shape: tuple, normalize: bool = True) -> GatherPlan:
    """Lower a parsed index (booleans already expanded) to gather indices and dimension
    numbers, step by step as jnp's `_index_to_gather` does."""
    _validate_slices(entries)
    entries = [Entry(lnp.asarray(e.index), e.kind, e.axes) if isinstance(e.index, Sequence)
               else e for e in entries]
    positions = [n for n, e in enumerate(entries) if e.kind in (ARRAY, INTEGER)]
    contiguous = all(b - a == 1 for a, b in zip(positions, positions[1:]))
    entries = _expand_ellipsis(entries, len(shape))
    scalar_bool_dims = [n for n, e in enumerate(entries) if e.kind == BOOLEAN]
    entries, shape = _expand_scalar_bools(entries, shape)
    if normalize:
        entries = _normalize_entries(entries, shape)
    advanced, adv_positions, x_adv_axes = [], [], []
    if any(_is_advanced(e) for e in entries):
        kept = [(n, e) for n, e in enumerate(entries) if e.kind != NONE]
        for j, (n, e) in enumerate(kept):
            if e.kind in (ARRAY, INTEGER):
                advanced.append(lnp.asarray(e.index))
                adv_positions.append(n)
                x_adv_axes.append(j)
    return _build_gather_plan(entries, shape, advanced, adv_positions, x_adv_axes,
                              contiguous, scalar_bool_dims)


def _build_gather_plan(entries: list[Entry], shape: tuple, advanced: list, adv_positions: list,
                       x_adv_axes: list, contiguous: bool, scalar_bool_dims: list) -> GatherPlan:
    """Walk the entries in order, adding each one's gather indices and dimensions."""
    b = _GatherBuilder(shape)
    for pos, e in enumerate(entries):
        if advanced and pos == (adv_positions[0] if contiguous else 0):
            b.add_advanced(advanced, x_adv_axes)
        if pos in adv_positions:
            b.skip_advanced_axis()
        elif e.kind in (INTEGER, ARRAY) and np.ndim(e.index) == 0:
            b.add_scalar(e.index)
        elif e.kind == NONE:
            b.add_newaxis()
        elif e.kind in (SLICE, DYNAMIC_SLICE):
            b.add_slice(e.index)
        else:
            raise IndexError(f"Got unsupported indexer at position {pos}: {e!r}")
    return b.finish(not advanced, scalar_bool_dims)


class _GatherBuilder:
    """The running state of `_build_gather_plan`: axes of x and y consumed so far, the pieces
    of the gather index array and the dimension numbers."""

    def __init__(self, shape: tuple):
        self.shape, self.index_dtype = shape, _index_dtype(shape)
        self.x_axis = self.y_axis = self.collapsed_y_axis = 0
        self.offset_dims: list[int] = []
        self.collapsed: list[int] = []
        self.start_index_map: list[int] = []
        self.pieces: list[tuple[Any, int]] = []
        self.pieces_shape: list[int] = []
        self.slice_shape: list[int] = []
        self.newaxis_dims: list[int] = []
        self.reversed_y_dims: list[int] = []
        self.gather_slice_shape: list[int] = []

    def add_advanced(self, advanced: list, x_axes: list) -> None:
        """The broadcast advanced indices, collapsing the x axes they index."""
        arrays = _broadcast_arrays(*advanced)
        adv_shape = tuple(np.shape(arrays[0]))
        start = len(self.pieces_shape)
        self.pieces.extend((_convert_index(a, self.index_dtype), start) for a in arrays)
        self.pieces_shape += adv_shape
        self.start_index_map.extend(x_axes)
        self.collapsed.extend(x_axes)
        self.slice_shape.extend(adv_shape)
        self.y_axis += len(adv_shape)
        self.collapsed_y_axis += len(adv_shape)

    def skip_advanced_axis(self) -> None:
        """An x axis indexed by the advanced group (already added)."""
        self.x_axis += 1
        self.gather_slice_shape.append(1)

    def add_scalar(self, index: Any) -> None:
        """A scalar index: one start index, the axis collapsed."""
        if self.shape[self.x_axis] == 0:
            raise IndexError(f"index is out of bounds for axis {self.x_axis} with size 0")
        converted = ew.convert_element_type(index, self.index_dtype)
        self.pieces.append((converted, len(self.pieces_shape)))
        self.collapsed.append(self.x_axis)
        self.gather_slice_shape.append(1)
        self.start_index_map.append(self.x_axis)
        self.x_axis += 1

    def add_newaxis(self) -> None:
        """None: a size-1 axis of y."""
        self.slice_shape.append(1)
        self.newaxis_dims.append(self.y_axis)
        self.y_axis += 1

    def add_slice(self, s: "slice | Slice") -> None:
        """A slice (static, or a jax.ds Slice whose start may be traced): a window for unit
        steps, else an index vector start + step*iota."""
        if isinstance(s, Slice):
            start, step, size = s.start, s.stride, s.size
        else:
            start, step, size = _canonicalize_slice(s, self.shape[self.x_axis])
        self.slice_shape.append(size)
        if step == 1:
            if size != self.shape[self.x_axis]:
                self.pieces.append((ew.convert_element_type(start, self.index_dtype),
                                    len(self.pieces_shape)))
                self.start_index_map.append(self.x_axis)
            self.gather_slice_shape.append(size)
            self.offset_dims.append(self.collapsed_y_axis)
        else:
            indices = _strided_indices(start, step, size, self.index_dtype)
            if step < 0:
                self.reversed_y_dims.append(self.collapsed_y_axis)
                indices = shp.rev(indices, (0,))
            self.gather_slice_shape.append(1)
            self.pieces.append((indices, len(self.pieces_shape)))
            self.start_index_map.append(self.x_axis)
            self.pieces_shape.append(size)
            self.collapsed.append(self.x_axis)
        self.collapsed_y_axis += 1
        self.y_axis += 1
        self.x_axis += 1

    def finish(self, basic: bool, scalar_bool_dims: list) -> GatherPlan:
        """The plan; without advanced indices the gathered windows are unique and sorted."""
        dnums = ix.GatherDimensionNumbers(offset_dims=tuple(self.offset_dims),
                                          collapsed_slice_dims=tuple(sorted(self.collapsed)),
                                          start_index_map=tuple(self.start_index_map))
        indices = _stack_indices(self.pieces, self.pieces_shape, self.index_dtype)
        return GatherPlan(self.slice_shape, self.gather_slice_shape, indices, dnums, basic,
                          basic, self.reversed_y_dims, tuple(self.newaxis_dims),
                          scalar_bool_dims)


def _canonicalize_slice(s: slice, size: int) -> tuple[int, int, int]:
    """(start, step, length) of `s` on an axis of `size`."""
    start, stop, step = s.indices(size)
    length = max(0, (stop - start + step - (1 if step > 0 else -1)) // step)
    return start, step, length


def _strided_indices(start: Any, step: int, size: int, dtype: np.dtype) -> Any:
    """start + step * iota(size) (staged as jnp arithmetic, as jnp does; a traced start, of
    a jax.ds Slice, is copied and converted as jnp.array does)."""
    begin = (lnp.array(start, dtype=dtype) if isinstance(start, Tracer)
             else ArrayImpl(np.array(start, dtype), False))
    stride = ArrayImpl(np.array(step, dtype), False)
    return begin + stride * shp.iota(dtype, size)


def _stack_indices(gather_indices: list, shape: list, dtype: np.dtype) -> Any:
    """One (..., k) index array from the pieces, each placed at its starting dimension."""
    if not gather_indices:
        return np.zeros((0,), dtype)
    if len(gather_indices) == 1:
        g, _ = gather_indices[0]
        return shp.expand_dims(g, (np.ndim(g),))
    full = [*shape, 1]
    return shp.concatenate([shp.broadcast_in_dim(g, full, tuple(range(i, i + np.ndim(g))))
                            for g, i in gather_indices], len(shape))


# ---------------------------------------------------------------------------------------------
# x[idx] and x.at[idx].get()
# ---------------------------------------------------------------------------------------------

def rewriting_take(arr: Any, idx: Any, *, indices_are_sorted: bool = False,
                   unique_indices: bool = False, mode: Any = None, fill_value: Any = None,
                   normalize_indices: bool = True) -> Any:
    """arr[idx] by the cheapest lowering that applies: slice, then dynamic_slice, then gather."""
    shape = tuple(np.shape(arr))
    entries = parse(idx, shape)
    try:
        plan = _static_plan(entries, shape, mode, normalize_indices)
    except (TypeError, ValueError, IndexError):
        pass
    else:
        return _apply_static(arr, plan)
    try:
        dplan = _dynamic_plan(entries, shape, mode)
    except (TypeError, ValueError, IndexError):
        pass
    else:
        return _apply_dynamic(arr, dplan, normalize_indices)
    entries = expand_bool_indices(entries, shape)
    return _gather(arr, entries, indices_are_sorted=indices_are_sorted,
                   unique_indices=unique_indices, mode=mode, fill_value=fill_value,
                   normalize=normalize_indices)


def _check_fill_value(fill_value: Any) -> Any:
    """A gather fill value must be a concrete scalar; NumPy arrays become Python scalars."""
    if fill_value is None:
        return None
    if isinstance(fill_value, Tracer):
        value = fill_value.concrete_value()
        if value is None:
            raise errors.ConcretizationTypeError(
                fill_value, "The problem arose with the `fill_value argument to indexed get()` "
                "argument.")
        fill_value = np.asarray(value)
    if np.ndim(fill_value) != 0:
        raise ValueError("fill_value argument to indexed get() must be a scalar")
    return fill_value.item() if isinstance(fill_value, np.ndarray) else fill_value


def _gather(arr: Any, entries: list[Entry], *, indices_are_sorted: bool, unique_indices: bool,
            mode: Any, fill_value: Any, normalize: bool) -> Any:
    """arr[idx] through one gather (none when nothing needs gathering)."""
    plan = gather_plan(entries, tuple(np.shape(arr)), normalize)
    fill_value = _check_fill_value(fill_value)
    y = util.as_operand(arr)
    if plan.scalar_bool_dims:
        y = shp.expand_dims(y, plan.scalar_bool_dims)
    if 0 in plan.slice_shape:
        dtype, weak = util.type_of(y)
        return ix._full(tuple(plan.slice_shape), 0, dtype, weak)
    if 0 not in np.shape(plan.gather_indices):
        y = ix.gather(y, plan.gather_indices, plan.dnums, plan.gather_slice_shape,
                      unique_indices=unique_indices or plan.unique_indices,
                      indices_are_sorted=indices_are_sorted or plan.indices_are_sorted,
                      mode=mode, fill_value=fill_value)
    if plan.reversed_y_dims:
        y = shp.rev(y, plan.reversed_y_dims)
    return shp.expand_dims(y, plan.newaxis_dims)


_INT32 = 2 ** 31


def _basic_index(index: Any, shape: tuple) -> list | None:
    """`index` as a NumPy basic index with negative ints wrapped, when it only has ints,
    slices, None and Ellipsis that NumPy treats exactly as jnp does; else None."""
    items = index if type(index) is tuple else (index,)
    ndim = len(shape)
    consumed = sum(1 for it in items if it is not None and it is not Ellipsis)
    if consumed > ndim:
        return None
    out: list = []
    axis = 0
    seen_ellipsis = False
    for it in items:
        t = type(it)
        if t is int or t is ArrayImpl or isinstance(it, np.integer):
            value = _small_int(it)
            if value is None or shape[axis] == 0:
                return None
            out.append(value + shape[axis] if value < 0 else value)
            axis += 1
        elif t is slice:
            if not all(v is None or type(v) is int for v in (it.start, it.stop, it.step)) \
                    or it.step == 0:
                return None
            out.append(it)
            axis += 1
        elif it is None:
            out.append(None)
        elif it is Ellipsis and not seen_ellipsis:
            seen_ellipsis = True
            out.append(Ellipsis)
            axis += ndim - consumed
        else:
            return None
    return out


def _small_int(x: Any) -> int | None:
    """A scalar integer index as a Python int when it is in int32 range (else None)."""
    if type(x) is ArrayImpl:
        buf = x._buf
        if buf.ndim or buf.dtype not in (dtypes.int32, dtypes.int64):
            return None
        x = buf.item()
    value = int(x)
    return value if -_INT32 <= value < _INT32 else None


def _clamped(items: list, shape: tuple) -> tuple:
    """Wrapped ints clamped into their axis, as jnp clamps out-of-range static indices."""
    out, axis = [], 0
    consumed = sum(1 for it in items if it is not None and it is not Ellipsis)
    for it in items:
        if type(it) is int:
            out.append(min(max(it, 0), shape[axis] - 1))
            axis += 1
        elif it is Ellipsis:
            out.append(it)
            axis += len(shape) - consumed
        else:
            out.append(it)
            axis += it is not None
    return tuple(out)


def getitem(x: Any, index: Any) -> Any:
    """`x[index]` with NumPy semantics, lowered as jnp lowers it."""
    if type(x) is ArrayImpl and trace_state.trace is None and (
            primitive.eager_layout is None or not primitive.lays_out(x)):
        buf = x._buf
        if type(index) is int and buf.ndim:
            n = buf.shape[0]
            if 0 <= index < n:
                return ArrayImpl(buf[index, ...], x._weak)
            if -n <= index < 0:
                return ArrayImpl(buf[index + n, ...], x._weak)
        elif type(index) is ArrayImpl and index._buf.ndim:  # x[idx], the common gather
            taken = _take_rows(buf, index._buf)
            return rewriting_take(x, index) if taken is None else ArrayImpl(taken, x._weak)
        items = _basic_index(index, buf.shape)
        if items is not None:
            result = buf[_clamped(items, buf.shape)]
            return ArrayImpl(result if type(result) is np.ndarray else np.asarray(result),
                             x._weak)
        taken = _eager_take(buf, index)
        if taken is not None:
            return ArrayImpl(taken, x._weak)
    return rewriting_take(x, index)


def _take_rows(buf: np.ndarray, idx: np.ndarray) -> np.ndarray | None:
    """x[idx] for an int32/int64 index array (ndim >= 1) into the first axis, or None when
    the general path must take it (other index dtypes, an empty or 0-d x)."""
    n = buf.shape[0] if buf.ndim else 0
    if not 0 < n < _INT32 or (idx.dtype != dtypes.int32 and idx.dtype != dtypes.int64):
        return None
    return _take_clamped(buf, idx, 0, n)


def _take_clamped(buf: np.ndarray, idx: np.ndarray, axis: int, n: int) -> np.ndarray | None:
    """np.take along `axis` (n entries) as the gather jnp emits reads the int32/int64 indices
    idx: negative ones wrapped once, then all clamped into the axis.  NumPy's own take does
    that (a negative index counts from the end) while every index is in [-n, n), else it
    raises and int32 indices are normalised first (one NumPy call instead of four, in the
    common case); out-of-range int64 ones are left to the general path (None), which
    converts them to int32 first, as JAX does."""
    try:
        return buf.take(idx, axis=axis)
    except IndexError:
        if idx.dtype != dtypes.int32:
            return None
        return buf.take(np.where(idx < 0, idx + n, idx), axis=axis, mode="clip")


def _eager_take(buf: np.ndarray, index: Any) -> np.ndarray | None:
    """x[..., idx, ...] for one integer index array between full slices, by np.take: negative
    indices wrap and out-of-range ones clamp, as in the gather jnp emits (else None)."""
    items = index if type(index) is tuple else (index,)
    arrays = [n for n, it in enumerate(items) if type(it) in (ArrayImpl, np.ndarray)]
    if len(arrays) != 1 or len(items) > buf.ndim:
        return None
    pos = arrays[0]
    if not all(it == slice(None) for n, it in enumerate(items) if n != pos and it is not Ellipsis):
        return None
    if any(it is Ellipsis for it in items[:pos]):
        pos = buf.ndim - (len(items) - pos)
    if sum(it is Ellipsis for it in items) > 1:
        return None
    idx = items[arrays[0]]
    idx = idx._buf if type(idx) is ArrayImpl else idx
    n = buf.shape[pos]
    if idx.dtype not in (dtypes.int32, dtypes.int64) or not idx.ndim or n == 0 \
            or n >= _INT32 or (type(items[arrays[0]]) is np.ndarray
                               and idx.dtype != dtypes.canonicalize_dtype(idx.dtype)):
        return None
    return _take_clamped(buf, idx, pos, n)


# ---------------------------------------------------------------------------------------------
# x.at[idx].set / add / ...
# ---------------------------------------------------------------------------------------------

def _as_update_value(x: Any, y: Any) -> Any:
    """The update as an array: an in-range Python int takes x's integer dtype (strongly)."""
    if isinstance(x.dtype, dtypes.ExtendedDType):  # keys: the update is keys too
        return lnp.asarray(y)
    dtype = np.dtype(x.dtype)
    if isinstance(y, int) and dtypes.is_integer(dtype):
        info = dtypes.iinfo(dtype)
        if int(info.min) <= y <= int(info.max):
            return lnp.asarray(y, dtype=dtype)
    return lnp.asarray(y)


def _warn_unsafe_cast(x: Any, y: Any) -> None:
    """JAX's FutureWarning when the update does not cast safely to x's dtype."""
    if x.dtype == y.dtype:  # (keys too: they have no NumPy dtype)
        return
    xd, yd = np.dtype(x.dtype), np.dtype(y.dtype)
    if dtypes.promote([util.type_of(y), (xd, False)])[0] != xd:
        note_side_effect()
        warnings.warn(
            f"scatter inputs have incompatible types: cannot safely cast value from "
            f"dtype={yd} to dtype={xd} with jax_numpy_dtype_promotion="
            f"{config.numpy_dtype_promotion}. In future JAX releases this will result in an "
            "error.", FutureWarning, stacklevel=5)


@planned
def scatter_update(x: Any, idx: Any, y: Any, scatter_op: Callable, *,
                   indices_are_sorted: bool = False, unique_indices: bool = False,
                   mode: Any = None, normalize_indices: bool = True) -> Any:
    """x with y combined into x[idx] by `scatter_op` (a lax scatter function)."""
    x = lnp.asarray(x)
    y = _as_update_value(x, y)
    entries = expand_bool_indices(parse(idx, tuple(np.shape(x))), tuple(np.shape(x)))
    dtype, weak = util.type_of(x)
    _warn_unsafe_cast(x, y)
    plan = gather_plan(entries, tuple(np.shape(x)), normalize_indices)
    if 0 in plan.slice_shape:  # nothing to update: x itself, as JAX returns it (unchecked)
        return x
    x, y = util.promote_dtypes(x, y)
    y = _broadcast_to(y, plan.slice_shape)
    y = shp.squeeze(y, plan.newaxis_dims)
    if plan.reversed_y_dims:
        y = shp.rev(y, plan.reversed_y_dims)
    if plan.scalar_bool_dims:
        x = shp.expand_dims(x, plan.scalar_bool_dims)
    dnums = ix.ScatterDimensionNumbers(
        update_window_dims=plan.dnums.offset_dims,
        inserted_window_dims=plan.dnums.collapsed_slice_dims,
        scatter_dims_to_operand_dims=plan.dnums.start_index_map,
        operand_batching_dims=plan.dnums.operand_batching_dims,
        scatter_indices_batching_dims=plan.dnums.start_indices_batching_dims)
    out = scatter_op(x, plan.gather_indices, y, dnums,
                     indices_are_sorted=plan.indices_are_sorted or indices_are_sorted,
                     unique_indices=plan.unique_indices or unique_indices, mode=mode)
    if plan.scalar_bool_dims:
        out = shp.squeeze(out, plan.scalar_bool_dims)
    return util.convert(out, dtype, weak)


def _eager_update(x: Any, index: Any, y: Any, ufunc: Any) -> ArrayImpl | None:
    """NumPy fast path of a scalar update of a concrete array at a basic index or at an
    integer index array into its first axis (None when it does not apply); same result as
    the scatter, which drops out-of-range windows and combines under flushing (fp_mode)."""
    if type(x) is not ArrayImpl or trace_state.trace is not None or (
            primitive.eager_layout is not None and primitive.lays_out(x)):
        return None
    buf = x._buf
    if ufunc in _NOT_FOR_BOOL and buf.dtype == dtypes.bool_:
        return None
    value = _scalar_update_value(buf.dtype, x._weak, y)
    if value is None:
        return None
    if type(index) is ArrayImpl and index._buf.ndim:
        out = _update_rows(buf, index._buf, value, ufunc)
        return None if out is None else ArrayImpl(out, x._weak)
    items = _basic_index(index, buf.shape)
    if items is None:
        return None
    axis, consumed = 0, sum(1 for it in items if it is not None and it is not Ellipsis)
    for it in items:
        if type(it) is int and not 0 <= it < buf.shape[axis]:
            return ArrayImpl(buf, x._weak)
        axis += (buf.ndim - consumed) if it is Ellipsis else it is not None
    out = buf.copy()
    key = tuple(items)
    out[key] = value if ufunc is None else run_flushing(ufunc, out[key], value)
    return ArrayImpl(out, x._weak)


#: the combining ufuncs whose lax counterparts (add, sub, mul) reject bool operands: the
#: scatter path raises JAX's error
_NOT_FOR_BOOL = frozenset((np.add, np.subtract, np.multiply))


def _update_rows(buf: np.ndarray, idx: np.ndarray, value: np.ndarray, ufunc: Any
                 ) -> np.ndarray | None:
    """buf with rows idx (int32/int64, ndim >= 1) combined with the 0-d `value` by `ufunc.at`
    (None: replaced), in index order as the scatter combines them, negative indices counting
    from the end.  None when the general path must run: other index dtypes, nothing to
    update (the scatter returns x itself), or an index out of [-n, n), whose update the
    scatter drops (NumPy raises)."""
    if (idx.dtype != dtypes.int32 and idx.dtype != dtypes.int64) or not idx.size \
            or not buf.size:
        return None
    out = buf.copy()
    if ufunc is None:
        try:
            out[idx] = value
        except IndexError:
            return None
        return out
    switched = flush_on(KEPT) is SWITCHED
    try:
        ufunc.at(out, idx, value)
    except IndexError:
        return None
    finally:
        if switched:
            flush_off()
    return out


def _scalar_update_value(dtype: np.dtype, weak: bool, y: Any) -> np.ndarray | None:
    """y as a 0-d array of dtype when the update needs no promotion of x (else None); a
    Python scalar is converted once per value, x's type and x64 mode (`_SCALAR_UPDATES`)."""
    t = type(y)
    if t is ArrayImpl:
        buf = y._buf
        if buf.ndim:
            return None
        plan = _update_plan(dtype, weak, buf.dtype, y._weak)
        return None if plan is None else plan(buf)
    if t is int or t is bool:
        key: tuple = (t, y, dtype, weak, config.x64)
    elif t is float:  # -0.0 == 0.0: keyed by the sign too
        key = (t, y, math.copysign(1.0, y), dtype, weak, config.x64)
    elif t is complex:
        key = (t, y, math.copysign(1.0, y.real), math.copysign(1.0, y.imag), dtype, weak,
               config.x64)
    else:
        return None
    value = _SCALAR_UPDATES.get(key, _UNSEEN)
    if value is _UNSEEN:
        if len(_SCALAR_UPDATES) >= 256:
            _SCALAR_UPDATES.clear()
        value = _SCALAR_UPDATES[key] = _python_scalar_update(dtype, weak, y)
    return value


def _python_scalar_update(dtype: np.dtype, weak: bool, y: Any) -> np.ndarray | None:
    """_scalar_update_value of a Python scalar, computed (read-only: it is shared)."""
    bounds = _int_bounds(dtype) if type(y) is int else None
    if bounds is not None:  # an int into integer x: x's dtype when it fits
        value = np.asarray(y, dtype) if bounds[0] <= y <= bounds[1] else None
    elif type(y) is int and not -_INT32 <= y < _INT32:
        value = None
    else:
        ydtype, yweak = dtypes.dtype_and_weak(y)
        plan = _update_plan(dtype, weak, ydtype, yweak)
        value = None if plan is None else np.asarray(plan(np.asarray(y, ydtype)))
    if value is not None:
        value.flags.writeable = False
    return value


#: (Python scalar's type, value[, signs], x's dtype and weak type, x64) -> the update as a
#: 0-d array of x's dtype, or None (NaN keys never match: harmless)
_SCALAR_UPDATES: dict = {}
caches.register(_SCALAR_UPDATES.clear)
_UNSEEN = object()

_BOUNDS: dict = {}
_PLANS: dict = {}


def _int_bounds(dtype: np.dtype) -> tuple[int, int] | None:
    """(min, max) of an integer dtype, None for other dtypes (cached)."""
    if dtype not in _BOUNDS:
        info = dtypes.iinfo(dtype) if dtypes.is_integer(dtype) else None
        _BOUNDS[dtype] = None if info is None else (int(info.min), int(info.max))
    return _BOUNDS[dtype]


def _update_plan(dtype: np.dtype, weak: bool, ydtype: np.dtype, yweak: bool
                 ) -> Callable[[np.ndarray], np.ndarray] | None:
    """How to convert an update of type (ydtype, yweak) into x's dtype, or None when the
    update would promote x (cached per type pair and x64 mode)."""
    key = (dtype, weak, ydtype, yweak, config.x64)
    if key not in _PLANS:
        if dtypes.promote([(dtype, weak), (ydtype, yweak)])[0] != dtype:
            plan = None
        elif ydtype == dtype:
            plan = _identity
        elif ydtype == dtypes.bool_ or (dtypes.is_integer(ydtype) and dtypes.is_inexact(dtype)):
            plan = lambda b: b.astype(dtype)  # noqa: E731 - exact casts, no errstate needed
        else:
            plan = lambda b: ew._convert_impl(b, new_dtype=dtype)  # noqa: E731
        _PLANS[key] = plan
    return _PLANS[key]


def _identity(b: np.ndarray) -> np.ndarray:
    """The buffer unchanged."""
    return b


class _IndexUpdateRef:
    """`x.at[idx]`: the indexed-update methods (each returns a new array)."""

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any):
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Any = None, fill_value: Any = None, wrap_negative_indices: bool = True) -> Any:
        """x[idx], with control over out-of-bound indices (`mode`, `fill_value`)."""
        if mode is None and fill_value is None and wrap_negative_indices:
            return getitem(self.array, self.index)
        return rewriting_take(self.array, self.index, indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode, fill_value=fill_value,
                              normalize_indices=wrap_negative_indices)

    def _combined(self, values: Any, combine: Callable, indices_are_sorted: bool,
                  unique_indices: bool, mode: Any, wrap: bool) -> Any:
        """combine(x, ones.at[idx].multiply(values)): how JAX lowers divide and power."""
        operand = scatter_update(lnp.ones_like(self.array), self.index, values, ix.scatter_mul,
                                 indices_are_sorted=indices_are_sorted,
                                 unique_indices=unique_indices, mode=mode, normalize_indices=wrap)
        return combine(self.array, operand)

    def apply(self, func: Callable[[Any], Any], *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None,
              wrap_negative_indices: bool = True) -> Any:
        """x with x[idx] = func(x[idx]) (applied once per occurrence of an index)."""
        def scatter_apply(x: Any, indices: Any, y: Any, dims: Any, **kwargs: Any) -> Any:
            return ix.scatter_apply(x, indices, func, dims, update_shape=np.shape(y), **kwargs)
        dtype, weak = util.type_of(self.array)
        zero = ArrayImpl(np.zeros((), dtype), weak)
        return scatter_update(self.array, self.index, zero, scatter_apply,
                              indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode,
                              normalize_indices=wrap_negative_indices)


def _update_method(name: str, scatter_op: Callable | None, ufunc: Any, doc: str) -> Callable:
    """An `.at[idx].<name>(values)` method lowering to `scatter_op` (NumPy `ufunc` fast path)."""
    def method(self: _IndexUpdateRef, values: Any, *, indices_are_sorted: bool = False,
               unique_indices: bool = False, mode: Any = None,
               wrap_negative_indices: bool = True) -> Any:
        if mode is None and wrap_negative_indices:  # the NumPy fast path, when it applies
            fast = _eager_update(self.array, self.index, values, ufunc)
            if fast is not None:
                return fast
        return scatter_update(self.array, self.index, values, scatter_op,
                              indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode,
                              normalize_indices=wrap_negative_indices)
    method.__name__, method.__doc__ = name, doc
    return method


def _combined_method(name: str, combine: Callable, doc: str) -> Callable:
    """An `.at[idx].<name>(values)` method computed as combine(x, ones.at[idx].mul(values))."""
    def method(self: _IndexUpdateRef, values: Any, *, indices_are_sorted: bool = False,
               unique_indices: bool = False, mode: Any = None,
               wrap_negative_indices: bool = True) -> Any:
        return self._combined(values, combine, indices_are_sorted, unique_indices, mode,
                              wrap_negative_indices)
    method.__name__, method.__doc__ = name, doc
    return method


_UPDATE_METHODS = {
    "set": (ix.scatter, None, "x with x[idx] = values."),
    "add": (ix.scatter_add, np.add, "x with x[idx] += values (repeated indices accumulate)."),
    "subtract": (ix.scatter_sub, np.subtract, "x with x[idx] -= values."),
    "multiply": (ix.scatter_mul, np.multiply, "x with x[idx] *= values."),
    "min": (ix.scatter_min, np.minimum, "x with x[idx] = minimum(x[idx], values)."),
    "max": (ix.scatter_max, np.maximum, "x with x[idx] = maximum(x[idx], values)."),
}
for _name, (_op, _ufunc, _doc) in _UPDATE_METHODS.items():
    setattr(_IndexUpdateRef, _name, _update_method(_name, _op, _ufunc, _doc))
_IndexUpdateRef.mul = _IndexUpdateRef.multiply
_IndexUpdateRef.divide = _combined_method("divide", lambda x, d: uf.divide(x, d),
                                          "x with x[idx] /= values.")
_IndexUpdateRef.power = _combined_method("power", lambda x, p: uf.power(x, p),
                                         "x with x[idx] **= values.")


class AtIndexer:
    """`x.at`: `x.at[idx]` selects the entries that an update method acts on."""

    __slots__ = ("array",)

    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


# ---------------------------------------------------------------------------------------------
# take / take_along_axis
# ---------------------------------------------------------------------------------------------

def take(a: Any, indices: Any, axis: int | None = None, out: Any = None, mode: str | None = None,
         unique_indices: bool = False, indices_are_sorted: bool = False,
         fill_value: Any = None) -> Any:
    """Elements of `a` at `indices` along `axis` (flattened when None); out-of-bound indices
    give `fill_value` (NaN / the most negative int by default) unless mode is 'clip'/'wrap'."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    return _take(a, indices, axis=None if axis is None else operator.index(axis), mode=mode,
                 unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                 fill_value=fill_value)


@util.staged_as_jit(static_argnames=("axis", "mode", "unique_indices", "indices_are_sorted",
                                     "fill_value"))
def _take(a: Any, indices: Any, axis: int | None = None, mode: str | None = None,
          unique_indices: bool = False, indices_are_sorted: bool = False,
          fill_value: Any = None) -> Any:
    """jnp.take's body (jitted as `_take`, as in JAX)."""
    util.check_arraylike("take", a, indices)
    a, indices = util.as_operand(a), util.as_operand(indices)
    if axis is None:
        a = lnp.ravel(a)
        axis_idx = 0
    else:
        axis_idx = util.canonicalize_axis(axis, np.ndim(a))
    size = np.shape(a)[axis_idx]
    if mode is None or mode == "fill":
        gather_mode = Mode.FILL_OR_DROP
        indices = uf._where(indices < 0, indices + size, indices)
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    elif mode == "wrap":
        indices = uf.mod(indices, np.array(size, util.type_of(indices)[0]))
        gather_mode = Mode.PROMISE_IN_BOUNDS
    elif mode == "clip":
        gather_mode = Mode.CLIP
    else:
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    index_dims = np.ndim(indices)
    slice_sizes = list(np.shape(a))
    if slice_sizes[axis_idx] == 0:
        if np.size(indices):
            raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
        return a
    if np.size(indices) == 0:
        out_shape = slice_sizes[:axis_idx] + list(np.shape(indices)) + slice_sizes[axis_idx + 1:]
        return lnp.full_like(a, 0, shape=out_shape)
    slice_sizes[axis_idx] = 1
    dnums = ix.GatherDimensionNumbers(
        offset_dims=tuple(list(range(axis_idx)) +
                          list(range(axis_idx + index_dims, np.ndim(a) + index_dims - 1))),
        collapsed_slice_dims=(axis_idx,), start_index_map=(axis_idx,))
    return ix.gather(a, indices[..., None], dimension_numbers=dnums,
                     slice_sizes=tuple(slice_sizes), mode=gather_mode,
                     unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                     fill_value=fill_value)


def _normalize_index(index: Any, axis_size: int) -> Any:
    """index + axis_size where index < 0 (unsigned indices pass through)."""
    dtype = util.type_of(index)[0]
    if dtypes.is_unsigned(dtype):
        return index
    return ew.select(index < 0, ew.add(index, np.array(axis_size, dtype)), index)


def _take_along_axis(arr: Any, indices: Any, axis: int | None = -1, mode: Any = None,
                     fill_value: Any = None, *, wrap_negative_indices: bool | None = None) -> Any:
    """jnp.take_along_axis's body (jitted under that name, as in JAX)."""
    util.check_arraylike("take_along_axis", arr, indices)
    a, indices = util.as_operand(arr), util.as_operand(indices)
    idx_shape = tuple(np.shape(indices))
    if not dtypes.is_integer(util.type_of(indices)[0]):
        raise TypeError("take_along_axis indices must be of integer type, got "
                        f"{util.type_of(indices)[0]}")
    if axis is None:
        if len(idx_shape) != 1:
            raise ValueError(f"take_along_axis indices must be 1D if axis=None, got shape "
                             f"{idx_shape}")
        a, axis = lnp.ravel(a), 0
    rank = np.ndim(a)
    if rank != len(idx_shape):
        raise ValueError("indices and arr must have the same number of dimensions; "
                         f"{len(idx_shape)} vs. {rank}")
    axis_int = util.canonicalize_axis(axis, rank)
    axis_size = np.shape(a)[axis_int]
    arr_shape = tuple(1 if i == axis_int else d for i, d in enumerate(np.shape(a)))
    try:
        out_shape = np.broadcast_shapes(idx_shape, arr_shape)
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes="
                         f"{[idx_shape, arr_shape]}") from None
    if axis_size == 0:
        return ix._full(tuple(out_shape), 0, util.type_of(a)[0])
    if mode == "one_hot":
        raise NotImplementedError("take_along_axis mode='one_hot' is not supported")
    if wrap_negative_indices is None:
        wrap_negative_indices = mode != "promise_in_bounds"
    index_dtype = _index_dtype((axis_size,)) if wrap_negative_indices else \
        util.type_of(indices)[0]
    indices = ew.convert_element_type(indices, index_dtype)
    if wrap_negative_indices:
        indices = _normalize_index(indices, axis_size)
    return _gather_along_axis(a, indices, idx_shape, arr_shape, out_shape, axis_int, mode,
                              fill_value)


def _gather_along_axis(a: Any, indices: Any, idx_shape: tuple, arr_shape: tuple,
                       out_shape: tuple, axis: int, mode: Any, fill_value: Any) -> Any:
    """The gather of take_along_axis: size-1 index axes take the whole array axis, matching
    axes become batching dimensions, size-1 array axes are squeezed away."""
    index_dims = [i for i, d in enumerate(idx_shape) if i == axis or d != 1]
    gather_indices = shp.reshape(indices, tuple(np.array(out_shape)[index_dims]) + (1,))
    slice_sizes, offset_dims, start_index_map, collapsed = [], [], [], []
    operand_batching, indices_batching, squeezed = [], [], []
    new_i = j = 0
    for i in range(len(arr_shape)):
        if i == axis:
            slice_sizes.append(1)
            start_index_map.append(new_i)
            collapsed.append(new_i)
            new_i += 1
            j += 1
        elif idx_shape[i] == 1:
            offset_dims.append(i)
            slice_sizes.append(arr_shape[i])
            new_i += 1
        elif arr_shape[i] == 1:
            squeezed.append(i)
            j += 1
        else:
            slice_sizes.append(0 if arr_shape[i] == 0 else 1)
            operand_batching.append(new_i)
            indices_batching.append(j)
            new_i += 1
            j += 1
    a = shp.squeeze(a, squeezed)
    dnums = ix.GatherDimensionNumbers(
        offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(collapsed),
        start_index_map=tuple(start_index_map), operand_batching_dims=tuple(operand_batching),
        start_indices_batching_dims=tuple(indices_batching))
    return ix.gather(a, gather_indices, dnums, tuple(slice_sizes),
                     mode="fill" if mode is None else mode, fill_value=fill_value)


_take_along_axis.__name__ = _take_along_axis.__qualname__ = "take_along_axis"
take_along_axis = util.staged_as_jit(
    _take_along_axis, static_argnames=("axis", "mode", "fill_value", "wrap_negative_indices"))
take_along_axis.__doc__ = ("Elements of `arr` at `indices` along `axis`; `indices` has arr's "
                           "rank and broadcasts against it off the axis.")
