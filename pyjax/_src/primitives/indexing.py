"""Indexing primitives: gather, the scatter family, dynamic_slice and dynamic_update_slice.

Their impls follow XLA's semantics on NumPy buffers, vectorised over all windows at once:
gather clamps start indices so each window is in bounds (PROMISE_IN_BOUNDS / CLIP) or fills
windows that are not (FILL_OR_DROP); scatter drops out-of-bounds windows unless the mode is CLIP.
The abstract rules raise JAX's shape and dtype errors, and the lax wrappers bind with the same
params JAX's do, so staged programs print like JAX 0.10's.
"""
from __future__ import annotations

import enum
import functools
import math
import weakref
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from pyjax._src import caches
from pyjax._src.backend import host_memory
from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.parallel import propagation
from pyjax._src.core.jaxpr import Jaxpr, eval_jaxpr
from pyjax._src.core.trace import use_trace
from pyjax._src.primitives import elementwise as ew
from pyjax._src.primitives._rules import make_primitive


# ---------------------------------------------------------------------------------------------
# Parameter types
# ---------------------------------------------------------------------------------------------

class GatherDimensionNumbers(NamedTuple):
    """How operand, start indices and output dimensions relate in a gather (XLA's names)."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How operand, scatter indices and updates dimensions relate in a scatter."""

    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
    """What gather and scatter do with out-of-bounds indices."""

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s: "str | GatherScatterMode | None") -> "GatherScatterMode":
        """Parse a mode name ('clip', 'fill', 'drop', 'promise_in_bounds'); None is FILL_OR_DROP."""
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')


# ---------------------------------------------------------------------------------------------
# Shared helpers for the impls
# ---------------------------------------------------------------------------------------------

def _as_int64(x: np.ndarray) -> np.ndarray:
    """Integer indices as int64 (uint64 values beyond int64 saturate, so they stay out of range)."""
    if x.dtype == np.uint64:
        return np.minimum(x, np.iinfo(np.int64).max).astype(np.int64)
    return x.astype(np.int64, copy=False)


def _start_matrix(rank: int, indices: np.ndarray, index_map: Sequence[int],
                  operand_batching: Sequence[int], indices_batching: Sequence[int]) -> np.ndarray:
    """(B, rank) start coordinates of every window: index vectors placed at `index_map`, batch
    coordinates at the operand batching dims, zeros elsewhere."""
    batch_shape = indices.shape[:-1]
    count = math.prod(batch_shape)
    starts = np.zeros((count, rank), np.int64)
    if index_map:
        starts[:, list(index_map)] = _as_int64(indices).reshape(count, len(index_map))
    if operand_batching:
        grid = np.indices(batch_shape).reshape(len(batch_shape), count)
        for od, idim in zip(operand_batching, indices_batching):
            starts[:, od] = grid[idim]
    return starts


def _window_positions(starts: np.ndarray, window_dims: Sequence[int],
                      window_sizes: Sequence[int]) -> tuple[np.ndarray, ...]:
    """Per operand dimension, the (B, W) coordinates of every element of every window."""
    size = math.prod(window_sizes)
    offsets = np.indices(tuple(window_sizes)).reshape(len(window_sizes), size)
    positions = []
    for d in range(starts.shape[1]):
        column = starts[:, d:d + 1]
        if d in window_dims:
            column = column + offsets[list(window_dims).index(d)][None, :]
        positions.append(column)
    return tuple(np.broadcast_arrays(*positions)) if positions else ()


def _cast_scalar(value: Any, dtype: np.dtype) -> np.ndarray:
    """A fill value as a 0-d array of `dtype` (with convert_element_type's semantics)."""
    buf = np.asarray(value)
    return ew._convert_impl(buf, new_dtype=dtype) if buf.dtype != dtype else buf


# ---------------------------------------------------------------------------------------------
# gather
# ---------------------------------------------------------------------------------------------

def _single_axis(rank: int, index_map: Sequence[int], dropped: Sequence[int],
                 operand_batching: Sequence[int], window_dims: Sequence[int], nbatch: int,
                 window_sizes: Sequence[int], shape: tuple) -> int | None:
    """The axis k when a gather/scatter indexes only axis k with full windows on every other
    axis, laid out as np.take(operand, indices, axis=k) lays them (else None)."""
    if len(index_map) != 1 or tuple(dropped) != tuple(index_map) or operand_batching:
        return None
    k = index_map[0]
    expected = tuple(range(k)) + tuple(range(k + nbatch, rank - 1 + nbatch))
    full = tuple(shape[d] for d in range(rank) if d != k)
    if tuple(window_dims) != expected or tuple(window_sizes) != full:
        return None
    return k


def _batched_single_axis(operand: np.ndarray, indices: np.ndarray, dn: Any,
                         window_dims: list, window_sizes: list, mode: Any) -> int | None:
    """The axis k when a gather indexes only axis k, per element of leading batch axes shared
    by operand and indices (in order), with full windows elsewhere and clamped indices; the
    indices then hold (*batch, m, 1)."""
    nb = len(dn.operand_batching_dims)
    if (not nb or mode == GatherScatterMode.FILL_OR_DROP or len(dn.start_index_map) != 1
            or tuple(dn.collapsed_slice_dims) != tuple(dn.start_index_map)
            or tuple(dn.operand_batching_dims) != tuple(range(nb))
            or tuple(dn.start_indices_batching_dims) != tuple(range(nb))
            or indices.ndim != nb + 2 or indices.shape[:nb] != operand.shape[:nb]
            or not operand.size or not indices.size):
        return None
    k = dn.start_index_map[0]
    if k < nb or any(operand.shape[d] != w for d, w in zip(window_dims, window_sizes)):
        return None
    return k


def _gather_impl(operand: np.ndarray, indices: np.ndarray, *, dimension_numbers: Any,
                 slice_sizes: tuple, unique_indices: bool, indices_are_sorted: bool,
                 mode: Any, fill_value: Any) -> np.ndarray:
    """XLA gather on buffers: clamped window starts; FILL_OR_DROP fills windows out of bounds."""
    dn = dimension_numbers
    rank = operand.ndim
    batch_shape = indices.shape[:-1]
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    window_dims = [d for d in range(rank) if d not in dropped]
    window_sizes = [slice_sizes[d] for d in window_dims]
    axis = _single_axis(rank, dn.start_index_map, dn.collapsed_slice_dims,
                        dn.operand_batching_dims, dn.offset_dims, len(batch_shape),
                        window_sizes, operand.shape)
    if axis is not None and operand.shape[axis] and operand.size:
        return _take_impl(operand, indices[..., 0], axis, mode, fill_value)
    axis = _batched_single_axis(operand, indices, dn, window_dims, window_sizes, mode)
    if axis is not None:  # each batch element's rows picked by its own indices (lu_solve)
        nb = len(dn.operand_batching_dims)
        moved = np.moveaxis(operand, axis, nb)  # (*batch, K, *windows)
        picks = np.clip(indices[..., 0], 0, operand.shape[axis] - 1)
        picks = picks.reshape(picks.shape + (1,) * (moved.ndim - nb - 1))
        out = np.take_along_axis(moved, picks, axis=nb)  # (*batch, m, *windows)
        nbi = len(batch_shape)
        return np.moveaxis(out, list(range(nbi, nbi + len(window_sizes))), list(dn.offset_dims))
    starts = _start_matrix(rank, indices, dn.start_index_map, dn.operand_batching_dims,
                           dn.start_indices_batching_dims)
    upper = np.array([operand.shape[d] - slice_sizes[d] for d in range(rank)], np.int64)
    in_bounds = None
    if mode == GatherScatterMode.FILL_OR_DROP and dn.start_index_map:
        sim = list(dn.start_index_map)
        in_bounds = np.all((starts[:, sim] >= 0) & (starts[:, sim] <= upper[sim]), axis=1)
    starts = np.clip(starts, 0, np.maximum(upper, 0))
    count, size = starts.shape[0], math.prod(window_sizes)
    if count == 0 or size == 0 or operand.size == 0:
        flat = np.zeros((count, size), operand.dtype)
    else:
        flat = operand[_window_positions(starts, window_dims, window_sizes)]
    if in_bounds is not None and not in_bounds.all():
        flat = np.where(in_bounds[:, None], flat, _cast_scalar(fill_value, operand.dtype))
    out = flat.reshape(tuple(batch_shape) + tuple(window_sizes))
    nb = len(batch_shape)
    return np.moveaxis(out, list(range(nb, nb + len(window_sizes))), list(dn.offset_dims))


def _take_impl(operand: np.ndarray, idx: np.ndarray, axis: int, mode: Any,
               fill_value: Any) -> np.ndarray:
    """The single-axis gather: np.take with clamped indices, filled where out of bounds."""
    idx = _as_int64(idx)
    n = operand.shape[axis]
    if operand.ndim > 1 and idx.ndim == 1 and not operand.flags.c_contiguous \
            and operand.flags.f_contiguous:  # (LAPACK's results) from the C-ordered
        # transpose: 3-5x faster than np.take across the strides, the same values
        out = np.take(operand.T, np.clip(idx, 0, n - 1), axis=operand.ndim - 1 - axis).T
    else:
        out = np.take(operand, np.clip(idx, 0, n - 1), axis=axis)
    if mode == GatherScatterMode.FILL_OR_DROP:
        valid = (idx >= 0) & (idx < n)
        if not valid.all():
            shape = (1,) * axis + idx.shape + (1,) * (operand.ndim - axis - 1)
            out = np.where(valid.reshape(shape), out, _cast_scalar(fill_value, operand.dtype))
    return out


def _check_sorted(dims: Sequence[int], op: str, name: str) -> None:
    """Dimension lists that must be ascending."""
    if any(dims[i] < dims[i - 1] for i in range(1, len(dims))):
        raise TypeError(f"{name} in {op} op must be sorted; got {dims}")


def _check_no_duplicates(dims: Sequence[int], op: str, name: str) -> None:
    """Dimension lists that must not repeat."""
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name} in {op} op must not repeat; got: {dims}.")


def _check_in_range(dims: Sequence[int], rank: int, op: str, name: str) -> None:
    """Every dim in [0, rank)."""
    for dim in dims:
        if dim < 0 or dim >= rank:
            raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); "
                            f"got: {dim}.")


def _check_sorted_in_range(dims: Sequence[int], rank: int, op: str, name: str) -> None:
    """A sorted dim list in [0, rank) (checking its ends, as XLA does)."""
    if not dims:
        return
    bad = dims[0] if dims[0] < 0 else dims[-1] if dims[-1] >= rank else None
    if bad:
        raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); "
                        f"got: {bad}.")


def _check_disjoint(a: Sequence[int], b: Sequence[int], op: str, na: str, nb: str) -> None:
    """Two dim lists that must not share a dim."""
    if not set(a).isdisjoint(set(b)):
        raise TypeError(f"{na} and {nb} in {op} op must be disjoint; got: {a} and {b}.")


def _check_leaf_dim(indices: ShapedArray, op: str) -> int:
    """The index vector dimension (always the last one); indices must have rank >= 1."""
    ivd = indices.ndim - 1
    if ivd < 0:
        raise TypeError(f"{op.capitalize()} index leaf dimension must be within [0, "
                        f"rank(indices) + 1). rank(indices) is {indices.ndim} and {op} index "
                        f"leaf dimension is {ivd}.")
    return ivd


def _check_indices_batching(operand: ShapedArray, indices: ShapedArray, obd: tuple, ibd: tuple,
                            op: str, iname: str) -> tuple[int, ...]:
    """The indices batching dims must be valid and match the operand's; returns their sizes."""
    Op = op.capitalize()  # noqa: N806 - the capitalised op name, as in the messages
    _check_no_duplicates(ibd, op, iname)
    _check_in_range(ibd, indices.ndim, op, iname)
    if indices.ndim - 1 in ibd:
        raise TypeError(f"{Op} op cannot have the index vector dimension as a batching "
                        f"dimension; got {ibd}.")
    if len(obd) != len(ibd):
        sep = "" if op == "gather" else " "
        raise TypeError(f"{Op} op requires equal numbers of operand_batching_dims and "
                        f"{iname}, got {obd} and{sep}{ibd}.")
    operand_batch = tuple(operand.shape[i] for i in obd)
    indices_batch = tuple(indices.shape[i] for i in ibd)
    if operand_batch != indices_batch:
        raise TypeError(f"{Op} op requires operand batching dimensions and indices batching "
                        f"dimensions to have the same shape, got {operand_batch} and "
                        f"{indices_batch}.")
    return operand_batch


def _check_gather_dims(operand: ShapedArray, indices: ShapedArray, dn: Any) -> None:
    """XLA's ValidateGatherDimensions, with JAX's messages."""
    offset_dims, collapsed = tuple(dn.offset_dims), tuple(dn.collapsed_slice_dims)
    obd, sim = tuple(dn.operand_batching_dims), tuple(dn.start_index_map)
    rank, ivd = operand.ndim, _check_leaf_dim(indices, "gather")
    _check_sorted(offset_dims, "gather", "offset_dims")
    _check_no_duplicates(offset_dims, "gather", "offset_dims")
    out_rank = len(offset_dims) + indices.ndim - 1
    for i, d in enumerate(offset_dims):
        if d < 0 or d >= out_rank:
            raise TypeError(f"Offset dimension {i} in gather op is out of bounds; got {d}, but "
                            f"should have been in [0, {out_rank})")
    if len(sim) != indices.shape[ivd]:
        raise TypeError(f"Gather op has {len(sim)} elements in start_index_map and the bound "
                        f"of dimension index_vector_dim={ivd} of indices is "
                        f"{indices.shape[ivd]}. These two numbers must be equal.")
    for i, d in enumerate(sim):
        if d < 0 or d >= rank:
            raise TypeError(f"Invalid start_index_map; domain is [0, {rank}), got: {i}->{d}.")
    _check_no_duplicates(sim, "gather", "start_index_map")
    _check_sorted(collapsed, "gather", "collapsed_slice_dims")
    _check_sorted_in_range(collapsed, rank, "gather", "collapsed_slice_dims")
    _check_no_duplicates(collapsed, "gather", "collapsed_slice_dims")
    _check_no_duplicates(obd, "gather", "operand_batching_dims")
    _check_sorted(obd, "gather", "operand_batching_dims")
    _check_sorted_in_range(obd, rank, "gather", "operand_batching_dims")
    _check_disjoint(collapsed, obd, "gather", "collapsed_slice_dims", "operand_batching_dims")
    _check_disjoint(sim, obd, "gather", "start_index_map", "operand_batching_dims")
    _check_indices_batching(operand, indices, obd, tuple(dn.start_indices_batching_dims),
                            "gather", "start_indices_batching_dims")


def _check_slice_sizes(operand: ShapedArray, indices: ShapedArray, dn: Any,
                       slice_sizes: tuple) -> None:
    """One slice size per operand dim, within the operand; collapsed/batching dims of size 1."""
    offset_dims, collapsed = tuple(dn.offset_dims), tuple(dn.collapsed_slice_dims)
    obd = tuple(dn.operand_batching_dims)
    if operand.ndim != len(slice_sizes):
        raise TypeError(f"Gather op must have one slice size for every input dimension; got: "
                        f"len(slice_sizes)={len(slice_sizes)}, input_shape.rank={operand.ndim}")
    if len(slice_sizes) != len(offset_dims) + len(collapsed) + len(obd):
        raise TypeError("All components of the offset index in a gather op must either be a "
                        f"offset dimension or explicitly collapsed/batching; got "
                        f"len(slice_sizes)={len(slice_sizes)}, output_slice_sizes="
                        f"{offset_dims}, collapsed_slice_dims={collapsed}, "
                        f"operand_batching_dims={obd}.")
    if 0 not in indices.shape:
        for i, size in enumerate(slice_sizes):
            if not 0 <= size <= operand.shape[i]:
                raise TypeError(f"Slice size at index {i} in gather op is out of range, must "
                                f"be within [0, {operand.shape[i]} + 1), got {size}.")
    for i, d in enumerate(collapsed):
        if slice_sizes[d] != 1:
            raise TypeError(f"Gather op can only collapse slice dims with bound 1, but bound "
                            f"is {slice_sizes[d]} for index {d} at position {i}.")
    for i, d in enumerate(obd):
        if slice_sizes[d] > 1:
            raise TypeError(f"Gather op can only have operand batching dims with bound 0/1, "
                            f"but bound is {slice_sizes[d]} for index {d} at position {i}.")


def _gather_shape(operand: ShapedArray, indices: ShapedArray, dn: Any,
                  slice_sizes: tuple) -> tuple[int, ...]:
    """JAX's gather shape rule: validate the dimension numbers, return the output shape."""
    _check_gather_dims(operand, indices, dn)
    _check_slice_sizes(operand, indices, dn, slice_sizes)
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    batch = iter(indices.shape[:-1])
    window = iter(s for i, s in enumerate(slice_sizes) if i not in dropped)
    out_rank = len(dn.offset_dims) + indices.ndim - 1
    return tuple(next(window) if i in dn.offset_dims else next(batch) for i in range(out_rank))


def _gather_abstract(operand: ShapedArray, indices: ShapedArray, *, dimension_numbers: Any,
                     slice_sizes: tuple, unique_indices: bool, indices_are_sorted: bool,
                     mode: Any, fill_value: Any) -> ShapedArray:
    """Output aval of gather (weak when the operand is)."""
    shape = _gather_shape(operand, indices, dimension_numbers, slice_sizes)
    if not dtypes.is_integer(indices.dtype):
        raise ValueError("indices must have an integer type")
    return ShapedArray(shape, operand.dtype, operand.weak_type)


gather_p = make_primitive("gather", _gather_impl, _gather_abstract)


def _default_fill(dtype: np.dtype) -> Any:
    """gather's FILL_OR_DROP default: NaN, the most negative int, the largest uint, or True."""
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtypes.is_unsigned(dtype):
        return int(dtypes.iinfo(dtype).max)
    if dtypes.is_integer(dtype):
        return int(dtypes.iinfo(dtype).min)
    if dtype == dtypes.bool_:
        return True
    if isinstance(dtype, dtypes.ExtendedDType) and dtypes.issubdtype(dtype, dtypes.prng_key):
        return int(np.iinfo(np.uint32).max)  # (every word of the key data)
    raise ValueError(f"Unsupported dtype for gather fill_value {dtype}")


def _dtype_of(x: Any) -> np.dtype:
    """The (canonical) dtype of an array, tracer or Python scalar."""
    return dtypes.dtype_and_weak(x)[0]


def gather(operand: Any, start_indices: Any, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode: "str | GatherScatterMode | None" = None,
           fill_value: Any = None) -> Any:
    """XLA gather: windows of `slice_sizes` taken at `start_indices` (index vectors last)."""
    parsed = GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else \
        GatherScatterMode.from_any(mode)
    if parsed == GatherScatterMode.FILL_OR_DROP:
        if fill_value is None:
            fill_value = _default_fill(_dtype_of(operand))
    else:
        fill_value = None
    return gather_p.bind(operand, start_indices, dimension_numbers=dimension_numbers,
                         slice_sizes=tuple(int(s) for s in slice_sizes),
                         unique_indices=bool(unique_indices),
                         indices_are_sorted=bool(indices_are_sorted), mode=parsed,
                         fill_value=fill_value)


# ---------------------------------------------------------------------------------------------
# scatter family
# ---------------------------------------------------------------------------------------------

def _scatter_windows(operand: np.ndarray, indices: np.ndarray, updates: np.ndarray, dn: Any,
                     mode: Any) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """Operand coordinates (each (B', W)) of the windows that are applied, and their updates."""
    rank = operand.ndim
    uwd = list(dn.update_window_dims)
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window_dims = [d for d in range(rank) if d not in dropped]
    window_sizes = [updates.shape[uwd[j]] for j in range(len(window_dims))]
    scatter_dims = [d for d in range(updates.ndim) if d not in uwd]
    count, size = math.prod(indices.shape[:-1]), math.prod(window_sizes)
    flat = np.transpose(updates, scatter_dims + uwd).reshape(count, size)
    starts = _start_matrix(rank, indices, dn.scatter_dims_to_operand_dims,
                           dn.operand_batching_dims, dn.scatter_indices_batching_dims)
    full = np.ones(rank, np.int64)
    full[window_dims] = window_sizes
    upper = np.asarray(operand.shape, np.int64) - full
    sim = list(dn.scatter_dims_to_operand_dims)
    if mode == GatherScatterMode.CLIP:
        starts[:, sim] = np.clip(starts[:, sim], 0, np.maximum(upper[sim], 0))
    elif sim:
        keep = np.all((starts[:, sim] >= 0) & (starts[:, sim] <= upper[sim]), axis=1)
        if not keep.all():
            starts, flat = starts[keep], flat[keep]
    return _window_positions(starts, window_dims, window_sizes), flat


def _make_scatter_impl(ufunc: Any) -> Callable[..., np.ndarray]:
    """An impl that combines updates into the operand with `ufunc.at` (None: replace)."""
    def impl(operand: np.ndarray, indices: np.ndarray, updates: np.ndarray, *,
             dimension_numbers: Any, indices_are_sorted: bool, unique_indices: bool,
             mode: Any, update_jaxpr: Any, update_consts: Any) -> np.ndarray:
        """XLA scatter on buffers (a copy of operand with the windows combined in)."""
        out = host_memory.empty(operand.shape, operand.dtype)
        np.copyto(out, operand)
        if out.size == 0 or updates.size == 0:
            return out
        if ufunc is not None or update_jaxpr is None:
            axis = _scatter_single_axis(operand, indices, updates, dimension_numbers)
            if axis is not None:
                _scatter_along_axis(out, indices[..., 0], updates, axis, mode, ufunc)
                return out
        positions, flat = _scatter_windows(operand, indices, updates, dimension_numbers, mode)
        if flat.size == 0:
            return out
        target = out
        if out.ndim == 0:  # every window of a 0-d operand is its one element
            target, positions = out.reshape(1), (np.zeros(flat.shape, np.intp),)
        if ufunc is not None:
            ufunc.at(target, positions, flat)
        elif update_jaxpr is None:
            target[positions] = flat
        else:
            _apply_update_jaxpr(target, positions, flat, update_jaxpr, update_consts)
        return out
    return impl


def _scatter_single_axis(operand: np.ndarray, indices: np.ndarray, updates: np.ndarray,
                         dn: Any) -> int | None:
    """The axis k when the scatter updates whole slices along axis k only (else None)."""
    rank, nb = operand.ndim, indices.ndim - 1
    dropped = list(dn.inserted_window_dims)
    window_sizes = [updates.shape[d] for d in dn.update_window_dims]
    return _single_axis(rank, dn.scatter_dims_to_operand_dims, dropped, dn.operand_batching_dims,
                        dn.update_window_dims, nb, window_sizes, operand.shape)


def _scatter_along_axis(out: np.ndarray, idx: np.ndarray, updates: np.ndarray, axis: int,
                        mode: Any, ufunc: Any) -> None:
    """Combine whole slices along `axis` in place: clamped (CLIP) or dropped out of bounds."""
    n = out.shape[axis]
    idx = _as_int64(idx)
    if mode == GatherScatterMode.CLIP:
        idx = np.clip(idx, 0, n - 1)
    else:
        valid = (idx >= 0) & (idx < n)
        if not valid.all():
            nb = idx.ndim
            moved = np.moveaxis(updates, list(range(axis, axis + nb)), list(range(nb)))
            updates = np.moveaxis(moved[valid], 0, axis)
            idx = idx[valid]
    key = (slice(None),) * axis + (idx,)
    if ufunc is None:
        out[key] = updates
    else:  # in order, repeated indices too (NumPy 2's ufunc.at is faster than a check for them)
        ufunc.at(out, key, updates)


def _apply_update_jaxpr(out: np.ndarray, positions: tuple, flat: np.ndarray, jaxpr: Jaxpr,
                        consts: Any) -> None:
    """Combine with a general update computation, in rounds so repeated indices compose."""
    linear = np.ravel_multi_index(positions, out.shape).ravel()
    values = flat.ravel()
    order = np.argsort(linear, kind="stable")
    sorted_lin = linear[order]
    first = np.r_[True, sorted_lin[1:] != sorted_lin[:-1]]
    group_start = np.maximum.accumulate(np.where(first, np.arange(sorted_lin.size), 0))
    occurrence = np.empty_like(linear)
    occurrence[order] = np.arange(sorted_lin.size) - group_start
    flat_out = out.reshape(-1)
    for rnd in range(int(occurrence.max()) + 1 if occurrence.size else 0):
        sel = occurrence == rnd
        where = linear[sel]
        flat_out[where] = _eval_update(jaxpr, consts, flat_out[where], values[sel], out.dtype)


def _eval_update(jaxpr: Jaxpr, consts: Any, old: np.ndarray, new: np.ndarray,
                 dtype: np.dtype) -> np.ndarray:
    """The scalar update computation applied elementwise (vectorised when it allows)."""
    from pyjax._src.core.array import ArrayImpl
    weak = [v.aval.weak_type for v in jaxpr.invars]

    def run(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The computation on two buffers."""
        out = eval_jaxpr(jaxpr, list(consts), ArrayImpl(a, weak[0]), ArrayImpl(b, weak[1]))[0]
        return np.asarray(getattr(out, "_buf", out))

    with use_trace(None):
        try:
            buf = run(old, new)
            if buf.shape == old.shape:
                return buf.astype(dtype, copy=False)
        except Exception:  # noqa: BLE001 - not elementwise: fall back to one call per element
            pass
        return np.array([run(o, n) for o, n in zip(old, new)], dtype).reshape(old.shape)


def _updates_batching_dims(indices_batching: Sequence[int], update_window_dims: Sequence[int],
                           index_vector_dim: int, updates_rank: int) -> tuple[int, ...]:
    """Positions in `updates` of the indices batching dims."""
    scatter_dim_in_updates: list[int | None] = list(range(index_vector_dim))
    for i in update_window_dims:
        scatter_dim_in_updates.insert(i, None)
    return tuple(scatter_dim_in_updates.index(i) for i in indices_batching)


def _check_scatter_dims(operand: ShapedArray, indices: ShapedArray, updates: ShapedArray,
                        dn: Any) -> None:
    """XLA's scatter dimension-number validation, with JAX's messages."""
    uwd, iwd = tuple(dn.update_window_dims), tuple(dn.inserted_window_dims)
    obd, sibd = tuple(dn.operand_batching_dims), tuple(dn.scatter_indices_batching_dims)
    rank, ivd = operand.ndim, _check_leaf_dim(indices, "scatter")
    expected_rank = indices.ndim - 1 + len(uwd)
    if updates.ndim != expected_rank:
        raise TypeError(f"Updates tensor must be of rank {expected_rank}; got {updates.ndim}.")
    _check_sorted(uwd, "scatter", "update_window_dims")
    _check_no_duplicates(uwd, "scatter", "update_window_dims")
    _check_sorted_in_range(uwd, updates.ndim, "scatter", "update_window_dims")
    _check_sorted(iwd, "scatter", "inserted_window_dims")
    _check_no_duplicates(iwd, "scatter", "inserted_window_dims")
    _check_sorted_in_range(iwd, rank, "scatter", "inserted_window_dims")
    _check_sorted(obd, "scatter", "operand_batching_dims")
    _check_no_duplicates(obd, "scatter", "operand_batching_dims")
    _check_sorted_in_range(obd, rank, "scatter", "operand_batching_dims")
    _check_disjoint(iwd, obd, "scatter", "inserted_window_dims", "operand_batching_dims")
    _check_disjoint(tuple(dn.scatter_dims_to_operand_dims), obd, "scatter",
                    "scatter_dims_to_operand_dims", "operand_batching_dims")
    operand_batch = _check_indices_batching(operand, indices, obd, sibd, "scatter",
                                            "scatter_indices_batching_dims")
    ubd = _updates_batching_dims(sibd, uwd, ivd, updates.ndim)
    updates_batch = tuple(updates.shape[i] for i in ubd)
    if operand_batch != updates_batch:
        raise TypeError("Scatter op requires operand batching dimensions and updates batching "
                        f"dimensions to have the same shape, got {operand_batch} and "
                        f"{updates_batch}.")


def _check_scatter_window(operand: ShapedArray, indices: ShapedArray, updates: ShapedArray,
                          dn: Any) -> None:
    """Window rank, index map and the bounds of the updates' window and scatter dims."""
    uwd, iwd = tuple(dn.update_window_dims), tuple(dn.inserted_window_dims)
    obd, sdod = tuple(dn.operand_batching_dims), tuple(dn.scatter_dims_to_operand_dims)
    rank, ivd = operand.ndim, indices.ndim - 1
    window = len(uwd) + len(iwd) + len(obd)
    if rank != window:
        raise TypeError(f"Scatter op has window of size {window}; doesn't match operand of "
                        f"rank {rank}.")
    if len(sdod) != indices.shape[ivd]:
        raise TypeError(f"Scatter op has {len(sdod)} elements in scatter_dims_to_operand_dims "
                        f"and the bound of dimension index_vector_dim={ivd} of indices is "
                        f"{indices.shape[ivd]}. These two numbers must be equal")
    for i, d in enumerate(sdod):
        if d < 0 or d >= rank:
            raise TypeError(f"Invalid scatter_dims_to_operand_dims mapping; domain is "
                            f"[0, {rank}), got: {i}->{d}.")
    _check_no_duplicates(sdod, "scatter", "scatter_dims_to_operand_dims")
    max_sizes = [operand.shape[i] for i in range(rank) if i not in iwd and i not in obd]
    for i, d in enumerate(uwd):
        if max_sizes[i] < updates.shape[d]:
            raise TypeError("Bounds of the window dimensions of updates must not exceed the "
                            "bounds of the corresponding dimensions of operand. For dimension "
                            f"{d}, updates bound is {updates.shape[d]}, operand bound is "
                            f"{max_sizes[i]}.")
    seen = 0
    for i in (d for d in range(updates.ndim) if d not in uwd):
        if seen == ivd:
            seen += 1
        if updates.shape[i] != indices.shape[seen]:
            raise TypeError("Bounds of the scatter dimensions of updates must be the same as "
                            "the bounds of the corresponding dimensions of scatter indices. For "
                            f"scatter dimension {i}, updates bound is {updates.shape[i]}, "
                            f"indices bound is {indices.shape[seen]}.")
        seen += 1


def _scatter_shape(operand: ShapedArray, indices: ShapedArray, updates: ShapedArray,
                   dn: Any) -> tuple[int, ...]:
    """JAX's scatter shape rule: validate the dimension numbers, return the operand shape."""
    _check_scatter_dims(operand, indices, updates, dn)
    _check_scatter_window(operand, indices, updates, dn)
    return operand.shape


def _scatter_abstract(operand: ShapedArray, indices: ShapedArray, updates: ShapedArray, *,
                      dimension_numbers: Any, indices_are_sorted: bool, unique_indices: bool,
                      mode: Any, update_jaxpr: Any, update_consts: Any) -> ShapedArray:
    """Output aval of every scatter: the operand's."""
    shape = _scatter_shape(operand, indices, updates, dimension_numbers)
    if not dtypes.is_integer(indices.dtype):
        raise ValueError("indices must have an integer type")
    if operand.dtype != updates.dtype:
        raise TypeError("lax.scatter requires arguments to have the same dtypes, got "
                        f"{operand.dtype}, {updates.dtype}.")
    return ShapedArray(shape, operand.dtype, operand.weak_type)


scatter_p = make_primitive("scatter", _make_scatter_impl(None), _scatter_abstract)
scatter_add_p = make_primitive("scatter-add", _make_scatter_impl(np.add), _scatter_abstract)
scatter_sub_p = make_primitive("scatter-sub", _make_scatter_impl(np.subtract), _scatter_abstract)
scatter_mul_p = make_primitive("scatter-mul", _make_scatter_impl(np.multiply), _scatter_abstract)
scatter_min_p = make_primitive("scatter-min", _make_scatter_impl(np.minimum), _scatter_abstract)
scatter_max_p = make_primitive("scatter-max", _make_scatter_impl(np.maximum), _scatter_abstract)


#: Depth of transpose rules running now.  JAX's reduction-jaxpr cache is keyed on the trace
#: context, which differs inside the backward pass (equations restore the abstract mesh they
#: were staged under), so a scatter built by a transpose rule gets its own update jaxpr, shared
#: only with others built by transpose rules (it prints as `jaxpr1` when hoisted).
_transposing = [0]


def _in_backward_pass(rule: Callable) -> Callable:
    """Run a transpose rule in the backward-pass context (see `_transposing`)."""
    @functools.wraps(rule)
    def wrapped(*args: Any, **params: Any) -> Any:
        _transposing[0] += 1
        try:
            return rule(*args, **params)
        finally:
            _transposing[0] -= 1
    return wrapped


def _reduction_jaxpr(combine: Callable, aval: ShapedArray) -> tuple[Jaxpr, tuple]:
    """The scalar update computation `combine(x, y)` as (jaxpr, consts): one per function, aval
    and context, so repeated scatters share it, as JAX's cached reduction jaxprs are."""
    return _cached_reduction_jaxpr(combine, aval, _transposing[0] > 0)


@functools.lru_cache(maxsize=512)
def _cached_reduction_jaxpr(combine: Callable, aval: ShapedArray, backward: bool
                            ) -> tuple[Jaxpr, tuple]:
    from pyjax._src.transforms.staging import trace_to_jaxpr
    closed = trace_to_jaxpr(lambda x, y: [combine(x, y)], [aval, aval])
    return closed.jaxpr, tuple(closed.consts)


def _scalar_aval(operand: Any) -> ShapedArray:
    """The strong scalar aval of the update computation's arguments."""
    return ShapedArray((), _dtype_of(operand), False)


def _bind_scatter(prim: Any, operand: Any, indices: Any, updates: Any, dimension_numbers: Any,
                  indices_are_sorted: bool, unique_indices: bool, mode: Any,
                  update: tuple[Any, tuple]) -> Any:
    """Bind a scatter primitive with JAX's params (`update` is (update_jaxpr, consts))."""
    update_jaxpr, update_consts = update
    return prim.bind(operand, indices, updates, update_jaxpr=update_jaxpr,
                     update_consts=update_consts,
                     dimension_numbers=dimension_numbers, indices_are_sorted=indices_are_sorted,
                     unique_indices=unique_indices, mode=GatherScatterMode.from_any(mode))


def scatter(operand: Any, scatter_indices: Any, updates: Any,
            dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: "str | GatherScatterMode | None" = None) -> Any:
    """XLA scatter that replaces operand windows with `updates`."""
    return _bind_scatter(scatter_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted, unique_indices, mode, (None, ()))


def _combining_scatter(prim: Any, combine: Callable, doc: str) -> Callable[..., Any]:
    """The lax wrapper of a scatter that combines with `combine` (its update_jaxpr)."""
    def fn(operand: Any, scatter_indices: Any, updates: Any,
           dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
           unique_indices: bool = False, mode: "str | GatherScatterMode | None" = None) -> Any:
        """(replaced by `doc`)"""
        update = _reduction_jaxpr(combine, _scalar_aval(operand))
        return _bind_scatter(prim, operand, scatter_indices, updates, dimension_numbers,
                             indices_are_sorted, unique_indices, mode, update)
    fn.__name__ = prim.name.replace("-", "_")
    fn.__doc__ = doc
    return fn


scatter_add = _combining_scatter(scatter_add_p, ew.add, "XLA scatter that adds `updates`.")
scatter_sub = _combining_scatter(scatter_sub_p, ew.sub, "XLA scatter that subtracts `updates`.")
scatter_mul = _combining_scatter(scatter_mul_p, ew.mul, "XLA scatter that multiplies.")
scatter_min = _combining_scatter(scatter_min_p, ew.min, "XLA scatter keeping the minimum.")
scatter_max = _combining_scatter(scatter_max_p, ew.max, "XLA scatter keeping the maximum.")

_apply_cache: "weakref.WeakKeyDictionary[Any, Callable]" = weakref.WeakKeyDictionary()
caches.register(_apply_cache.clear)
caches.register(_cached_reduction_jaxpr.cache_clear)


def scatter_apply(operand: Any, scatter_indices: Any, func: Callable[[Any], Any],
                  dimension_numbers: ScatterDimensionNumbers, *, update_shape: Sequence[int] = (),
                  indices_are_sorted: bool = False, unique_indices: bool = False,
                  mode: "str | GatherScatterMode | None" = None) -> Any:
    """XLA scatter that replaces operand elements x by func(x) (repeatedly for repeats)."""
    dtype, weak = dtypes.dtype_and_weak(operand)
    unused = _full(tuple(update_shape), 0, dtype)
    apply = lambda x, _: func(x)  # noqa: E731
    try:
        apply = _apply_cache.setdefault(func, apply)
    except TypeError:  # func is not weak-referenceable
        pass
    update = _reduction_jaxpr(apply, ShapedArray((), dtype, weak))
    return _bind_scatter(scatter_p, operand, scatter_indices, unused, dimension_numbers,
                         indices_are_sorted, unique_indices, mode, update)


def _full(shape: tuple, value: Any, dtype: np.dtype, weak: bool = False) -> Any:
    """lax.full: a constant broadcast to `shape` (a broadcast_in_dim equation when traced)."""
    from pyjax._src.core.array import ArrayImpl
    from pyjax._src.primitives.shape import broadcast_in_dim
    return broadcast_in_dim(ArrayImpl(np.asarray(value, dtype), weak), shape, ())


# ---------------------------------------------------------------------------------------------
# dynamic_slice / dynamic_update_slice
# ---------------------------------------------------------------------------------------------

def _clamped_starts(shape: tuple, sizes: Sequence[int], starts: Sequence[np.ndarray]) -> list:
    """Start indices clamped so that a window of `sizes` fits (XLA's dynamic-slice rule)."""
    out = []
    for dim, size, start in zip(shape, sizes, starts):
        value = int(_as_int64(np.asarray(start)))
        out.append(min(max(value, 0), dim - size))
    return out


def _dynamic_slice_impl(operand: np.ndarray, *starts: np.ndarray, slice_sizes: tuple
                        ) -> np.ndarray:
    """The window at the clamped start indices."""
    begin = _clamped_starts(operand.shape, slice_sizes, starts)
    return operand[tuple(slice(b, b + s) for b, s in zip(begin, slice_sizes))]


def _check_index_dtypes(name: str, starts: Sequence[ShapedArray]) -> None:
    """Start indices must be integers of one dtype."""
    if any(i.dtype != starts[0].dtype or not dtypes.is_integer(i.dtype) for i in starts):
        sep = ": " if name == "dynamic_slice" else " "
        raise TypeError(f"index arguments to {name} must be integers of the same type, got"
                        f"{sep}{', '.join(i.dtype.name for i in starts)}")


def _dynamic_slice_abstract(operand: ShapedArray, *starts: ShapedArray, slice_sizes: tuple
                            ) -> ShapedArray:
    """Output aval of dynamic_slice; JAX's shape and dtype errors."""
    if len(slice_sizes) != operand.ndim or not all(map(lambda a, b: a >= b, operand.shape,
                                                        slice_sizes)):
        raise TypeError("slice slice_sizes must be less than or equal to operand shape, got "
                        f"slice_sizes {slice_sizes} for operand shape {operand.shape}.")
    if not all(s >= 0 for s in slice_sizes):
        raise TypeError("slice slice_sizes must be greater than or equal to zero, got "
                        f"slice_sizes of {slice_sizes}.")
    if any(i.ndim != 0 for i in starts):
        raise TypeError("start_indices arguments to dynamic_slice must be scalars,  got "
                        f"indices {starts}")
    _check_index_dtypes("dynamic_slice", starts)
    return ShapedArray(tuple(slice_sizes), operand.dtype, operand.weak_type)


dynamic_slice_p = make_primitive("dynamic_slice", _dynamic_slice_impl, _dynamic_slice_abstract)


def _dynamic_update_slice_impl(operand: np.ndarray, update: np.ndarray, *starts: np.ndarray
                               ) -> np.ndarray:
    """A copy of operand with the window at the clamped starts replaced."""
    begin = _clamped_starts(operand.shape, update.shape, starts)
    out = np.array(operand, copy=True)
    out[tuple(slice(b, b + s) for b, s in zip(begin, update.shape))] = update
    return out


def _dynamic_update_slice_abstract(operand: ShapedArray, update: ShapedArray,
                                   *starts: ShapedArray) -> ShapedArray:
    """Output aval of dynamic_update_slice; JAX's shape and dtype errors."""
    if operand.ndim != update.ndim:
        raise TypeError("dynamic_update_slice update must have the same rank as operand, got "
                        f"update shape {update.shape} for operand shape {operand.shape}.")
    if operand.ndim != len(starts):
        raise TypeError("dynamic_update_slice start_indices must have length equal to the "
                        f"rank of operand, got indices {starts} for operand shape "
                        f"{operand.shape}.")
    if not all(a >= b for a, b in zip(operand.shape, update.shape)):
        raise TypeError("dynamic_update_slice update shape must be smaller than operand shape, "
                        f"got update shape {update.shape} for operand shape {operand.shape}.")
    if any(i.ndim != 0 for i in starts):
        raise TypeError("start_indices arguments to dynamic_update_slice must be scalars, got "
                        f"indices {starts}")
    if operand.dtype != update.dtype:
        raise TypeError("lax.dynamic_update_slice requires arguments to have the same dtypes, "
                        f"got {operand.dtype}, {update.dtype}.")
    _check_index_dtypes("dynamic_update_slice", starts)
    weak = operand.weak_type and update.weak_type and all(i.weak_type for i in starts)
    return ShapedArray(operand.shape, operand.dtype, weak)


dynamic_update_slice_p = make_primitive("dynamic_update_slice", _dynamic_update_slice_impl,
                                        _dynamic_update_slice_abstract)


def _is_static_int(i: Any) -> bool:
    """A Python or NumPy integer (not bool)."""
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _normalize_starts(operand: Any, start_indices: Any,
                      allow_negative_indices: "bool | Sequence[bool]") -> list:
    """Wrap negative start indices (staged as select when they are arrays), as JAX does."""
    shape = np.shape(operand)
    if len(start_indices) != len(shape):
        raise ValueError("Length of slice indices must match number of operand dimensions "
                         f"({len(start_indices)} vs {shape})")
    if not isinstance(start_indices, Sequence):
        if np.ndim(start_indices) != 1:
            raise ValueError(f"Slice indices must be a 1D sequence, got {np.shape(start_indices)}")
        start_indices = list(start_indices)
    if isinstance(allow_negative_indices, bool):
        allow_negative_indices = [allow_negative_indices] * len(start_indices)
    result = []
    for i, d, allow in zip(start_indices, shape, allow_negative_indices):
        dtype = _dtype_of(i)
        if dtypes.is_unsigned(dtype):
            result.append(i)
        elif _is_static_int(i):
            if i < 0 and not allow:
                raise ValueError(f"Index {i} is out of bounds for dimension {d} if "
                                 "allow_negative_indices=False")
            result.append(ew.convert_element_type(i + d if (allow and i < 0) else i, dtype))
        elif allow:
            size = ew.convert_element_type(d, dtype)
            result.append(ew.select(i < 0, i + size, i))
        else:
            result.append(i)
    return result


def dynamic_slice(operand: Any, start_indices: Any, slice_sizes: Sequence[int], *,
                  allow_negative_indices: "bool | Sequence[bool]" = True) -> Any:
    """The window of `slice_sizes` at (traced) `start_indices`, clamped to lie in bounds."""
    starts = _normalize_starts(operand, start_indices, allow_negative_indices)
    return dynamic_slice_p.bind(operand, *starts,
                                slice_sizes=tuple(int(s) for s in slice_sizes))


def dynamic_update_slice(operand: Any, update: Any, start_indices: Any, *,
                         allow_negative_indices: "bool | Sequence[bool]" = True) -> Any:
    """`operand` with the window at (traced) `start_indices` replaced by `update`."""
    starts = _normalize_starts(operand, start_indices, allow_negative_indices)
    return dynamic_update_slice_p.bind(operand, update, *starts)


# ---------------------------------------------------------------------------------------------
# Convenience wrappers
# ---------------------------------------------------------------------------------------------

def _zero_like_index(index: Any) -> np.ndarray:
    """A zero start index of `index`'s dtype."""
    return np.array(0, _dtype_of(index))


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Any:
    """operand[..., start:limit:stride] along `axis`, as a static slice."""
    from pyjax._src.primitives.shape import slice as static_slice
    shape = np.shape(operand)
    axis = int(axis)
    size = shape[axis]
    start = 0 if start_index is None else int(start_index)
    limit = size if limit_index is None else int(limit_index)
    start = start + size if start < 0 else start
    limit = limit + size if limit < 0 else limit
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return static_slice(operand, starts, limits, strides)


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """operand[..., index] along `axis` for a static index (kept as size 1 if keepdims)."""
    from pyjax._src.primitives.shape import squeeze
    index, axis = int(index), int(axis)
    size = np.shape(operand)[axis]
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {size}")
    result = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return result if keepdims else squeeze(result, (axis,))


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True) -> Any:
    """dynamic_slice along one axis (all of every other axis)."""
    ndim = np.ndim(operand)
    axis = int(axis)
    starts: list = [_zero_like_index(start_index)] * ndim
    sizes = list(np.shape(operand))
    allow = [False] * ndim
    allow[axis] = allow_negative_indices
    starts[axis] = start_index
    sizes[axis] = int(slice_size)
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def _dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True, *,
                          allow_negative_indices: bool = True) -> Any:
    """operand[..., index] along `axis` for a (traced) index (jitted as JAX's is)."""
    from pyjax._src.primitives.shape import squeeze
    result = dynamic_slice_in_dim(operand, index, 1, axis,
                                  allow_negative_indices=allow_negative_indices)
    return result if keepdims else squeeze(result, (axis,))


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """dynamic_update_slice along one axis."""
    ndim = np.ndim(operand)
    axis = int(axis)
    starts: list = [_zero_like_index(start_index)] * ndim
    starts[axis] = start_index
    allow = [False] * ndim
    allow[axis] = allow_negative_indices
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def _dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int, *,
                                 allow_negative_indices: bool = True) -> Any:
    """operand with the slice at `index` along `axis` replaced (jitted as JAX's is)."""
    from pyjax._src.primitives.shape import expand_dims
    axis = int(axis)
    if np.ndim(update) != np.ndim(operand):
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def _jitted(fun: Callable, name: str, static: tuple) -> Callable:
    """`fun` under the public `name`, jit-wrapped under a trace as JAX's is (jit[name=...])."""
    from pyjax._src.numpy.util import staged_as_jit
    fun.__name__ = fun.__qualname__ = name
    return staged_as_jit(fun, static_argnames=static)


dynamic_index_in_dim = _jitted(_dynamic_index_in_dim, "dynamic_index_in_dim",
                               ("axis", "keepdims", "allow_negative_indices"))
dynamic_update_index_in_dim = _jitted(_dynamic_update_index_in_dim,
                                      "dynamic_update_index_in_dim",
                                      ("axis", "allow_negative_indices"))


# ---------------------------------------------------------------------------------------------
# Autodiff (JAX's rules): the windows move linearly; indices are never differentiated
# ---------------------------------------------------------------------------------------------

def _ad():
    """The autodiff module (imported late: it is not needed to build these primitives)."""
    from pyjax._src.transforms import ad
    return ad


def _zeros_of(shape: Sequence[int], dtype: np.dtype, weak: bool = False) -> Any:
    """lax.full(shape, 0, dtype): a broadcast of a 0 literal (the literal itself for shape ())."""
    return _full(tuple(shape), 0, dtype, weak)


def _zeros_like(x: Any, dtype: Any = None) -> Any:
    """lax._zeros(x): zeros of x's shape and dtype, weak when x is."""
    x_dtype, weak = dtypes.dtype_and_weak(x)
    if dtype is not None:
        return _zeros_of(np.shape(x), dtype)
    return _zeros_of(np.shape(x), x_dtype, weak)


def _ones_like(x: Any, dtype: Any = None) -> Any:
    """lax._ones(x): ones of x's shape (and dtype, weak when x is, unless `dtype` is given)."""
    x_dtype, weak = dtypes.dtype_and_weak(x)
    if dtype is not None:
        return _full(tuple(np.shape(x)), 1, dtype, False)
    return _full(tuple(np.shape(x)), 1, x_dtype, weak)


def _shape_of(x: Any) -> tuple:
    ad = _ad()
    return tuple(x.aval.shape) if ad.is_undefined(x) else tuple(np.shape(x))


def _inverse_gather(dn: Any, updates_shape: Sequence[int], rank: int
                    ) -> tuple[GatherDimensionNumbers, list]:
    """The gather that reads back the windows a scatter with `dn` writes."""
    gather_dn = GatherDimensionNumbers(
        offset_dims=dn.update_window_dims,
        collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims)
    slice_sizes, pos = [], 0
    for i in range(rank):
        if i in dn.inserted_window_dims or i in dn.operand_batching_dims:
            slice_sizes.append(1)
        else:
            slice_sizes.append(updates_shape[dn.update_window_dims[pos]])
            pos += 1
    return gather_dn, slice_sizes


# -- dynamic_slice / dynamic_update_slice -----------------------------------------------------

def _dynamic_slice_jvp(primals: Sequence[Any], tangents: Sequence[Any], *,
                       slice_sizes: tuple) -> tuple:
    t = tangents[0]  # the tangent is sliced first, as in JAX
    if type(t) is not _ad().Zero:
        t = dynamic_slice_p.bind(t, *primals[1:], slice_sizes=slice_sizes)
    out = dynamic_slice_p.bind(primals[0], *primals[1:], slice_sizes=slice_sizes)
    return out, (_ad().Zero.like(out) if type(t) is _ad().Zero else t)


def _dynamic_slice_transpose(ct: Any, operand: Any, *starts: Any, slice_sizes: tuple) -> list:
    """Write the cotangent into zeros at the same (clamped) place."""
    ad = _ad()
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval), *[None] * len(starts)]
    zeros = _zeros_of(operand.aval.shape, operand.aval.dtype)
    return [dynamic_update_slice_p.bind(zeros, ct, *starts), *[None] * len(starts)]


def _dynamic_update_slice_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
    ad = _ad()
    operand, update, *starts = primals
    g_operand, g_update = tangents[:2]
    out = dynamic_update_slice_p.bind(operand, update, *starts)
    if type(g_operand) is ad.Zero and type(g_update) is ad.Zero:
        return out, ad.Zero.like(out)
    return out, dynamic_update_slice_p.bind(ad.instantiate(g_operand), ad.instantiate(g_update),
                                            *starts)


def _dynamic_update_slice_transpose(ct: Any, operand: Any, update: Any, *starts: Any) -> list:
    """Operand: the cotangent with the window zeroed; update: the window."""
    ad = _ad()
    nones = [None] * len(starts)
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval) if ad.is_undefined(operand) else None,
                ad.Zero(update.aval) if ad.is_undefined(update) else None, *nones]
    update_shape = _shape_of(update)
    ct_dtype, ct_weak = dtypes.dtype_and_weak(ct)
    zeros = _zeros_of(update_shape, ct_dtype, ct_weak)
    operand_t = dynamic_update_slice_p.bind(ct, zeros, *starts) \
        if ad.is_undefined(operand) else None
    update_t = dynamic_slice_p.bind(ct, *starts, slice_sizes=update_shape) \
        if ad.is_undefined(update) else None
    return [operand_t, update_t, *nones]


# -- gather -----------------------------------------------------------------------------------

def _gather_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, dimension_numbers: Any,
                slice_sizes: tuple, unique_indices: bool, indices_are_sorted: bool, mode: Any,
                fill_value: Any) -> tuple:
    ad = _ad()
    operand, indices = primals
    out = gather_p.bind(operand, indices, dimension_numbers=dimension_numbers,
                        slice_sizes=slice_sizes, unique_indices=unique_indices,
                        indices_are_sorted=indices_are_sorted, mode=mode,
                        fill_value=fill_value)
    g = tangents[0]
    if type(g) is ad.Zero:
        return out, ad.Zero.like(out)
    return out, gather(g, indices, dimension_numbers, slice_sizes,
                       unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                       mode=mode, fill_value=0)


def _gather_transpose(ct: Any, operand: Any, indices: Any, *, dimension_numbers: Any,
                      slice_sizes: tuple, unique_indices: bool, indices_are_sorted: bool,
                      mode: Any, fill_value: Any) -> list:
    """Scatter-add the cotangent windows into zeros."""
    ad = _ad()
    if not ad.is_undefined(operand):
        return [None, None]
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval), None]
    dn = dimension_numbers
    zeros = _zeros_of(operand.aval.shape, dtypes.dtype_and_weak(ct)[0])
    scatter_dn = ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims,
        inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims)
    out = scatter_add(zeros, indices, ct, scatter_dn, unique_indices=unique_indices,
                      indices_are_sorted=indices_are_sorted, mode=mode)
    return [out, None]


# -- scatter-add / scatter-sub ----------------------------------------------------------------

def _scatter_params(prim: Any) -> Callable:
    """A jvp for the scatters linear in (operand, updates): the same scatter of tangents."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
        ad = _ad()
        operand, indices, updates = primals
        g_operand, _, g_updates = tangents
        out = prim.bind(operand, indices, updates, **params)
        if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
            return out, ad.Zero.like(out)
        return out, prim.bind(ad.instantiate(g_operand), indices, ad.instantiate(g_updates),
                              **params)
    return jvp


def _scatter_addsub_transpose(prim: Any) -> Callable:
    def transpose(ct: Any, operand: Any, indices: Any, updates: Any, *, update_jaxpr: Any,
                  update_consts: Any, dimension_numbers: Any, indices_are_sorted: bool,
                  unique_indices: bool, mode: Any) -> list:
        """Operand: the cotangent; updates: the cotangent's windows (negated for sub)."""
        ad = _ad()
        if type(ct) is ad.Zero:
            return [ad.Zero(operand.aval) if ad.is_undefined(operand) else None, None,
                    ad.Zero(updates.aval) if ad.is_undefined(updates) else None]
        operand_t = ct if ad.is_undefined(operand) else None
        update_t = None
        if ad.is_undefined(updates):
            gather_dn, sizes = _inverse_gather(dimension_numbers, updates.aval.shape,
                                               len(np.shape(ct)))
            update_t = gather(ct, indices, dimension_numbers=gather_dn, slice_sizes=sizes,
                              mode=mode, fill_value=0)
            if prim is scatter_sub_p:
                update_t = ew.neg(update_t)
        return [operand_t, None, update_t]
    return transpose


# -- scatter-mul ------------------------------------------------------------------------------

def _scatter_mul_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
    ad = _ad()
    operand, indices, updates = primals
    g_operand, _, g_updates = tangents
    out = scatter_mul_p.bind(operand, indices, updates, **params)
    total: Any = ad.Zero.like(out)
    if type(g_operand) is not ad.Zero:
        total = ad.add_tangents(total, scatter_mul_p.bind(g_operand, indices, updates, **params))
    if type(g_updates) is not ad.Zero:
        if not params["unique_indices"]:
            raise NotImplementedError(
                "scatter_mul gradients are only implemented if `unique_indices=True`")
        from pyjax._src.transforms.staging import abstractify
        spread = scatter_add(ad.zeros_like_aval(abstractify(operand)), indices, g_updates,
                             dimension_numbers=params["dimension_numbers"],
                             indices_are_sorted=params["indices_are_sorted"],
                             unique_indices=params["unique_indices"], mode=params["mode"])
        total = ad.add_tangents(total, ew.mul(operand, spread))
    return out, total


def _scatter_mul_transpose(ct: Any, operand: Any, indices: Any, updates: Any, *,
                           update_jaxpr: Any, update_consts: Any, dimension_numbers: Any,
                           indices_are_sorted: bool, unique_indices: bool, mode: Any) -> list:
    ad = _ad()
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval) if ad.is_undefined(operand) else None, None,
                ad.Zero(updates.aval) if ad.is_undefined(updates) else None]
    operand_t = update_t = None
    if ad.is_undefined(operand):
        operand_t = scatter_mul(ct, indices, updates, dimension_numbers=dimension_numbers,
                                indices_are_sorted=indices_are_sorted,
                                unique_indices=unique_indices, mode=mode)
    if ad.is_undefined(updates):
        if not unique_indices:
            raise NotImplementedError(
                "scatter_mul gradients are only implemented if `unique_indices=True`")
        gather_dn, sizes = _inverse_gather(dimension_numbers, updates.aval.shape,
                                           len(np.shape(ct)))
        update_t = gather(ew.mul(ct, operand), indices, dimension_numbers=gather_dn,
                          slice_sizes=sizes, mode=mode, fill_value=0)
    return [operand_t, None, update_t]


# -- scatter-min / scatter-max ----------------------------------------------------------------

def _scatter_extremal_jvp(prim: Any) -> Callable:
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], *, update_jaxpr: Any,
            update_consts: Any, dimension_numbers: Any, indices_are_sorted: bool,
            unique_indices: bool, mode: Any) -> tuple:
        """Ties share the tangent: each contender (and a retained operand value) gets an equal
        part, as in JAX."""
        ad = _ad()
        operand, indices, updates = primals
        g_operand, _, g_updates = tangents
        dn = dimension_numbers
        out = prim.bind(operand, indices, updates, update_jaxpr=update_jaxpr,
                        update_consts=update_consts, dimension_numbers=dn,
                        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        mode=mode)
        if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
            return out, ad.Zero.like(out)
        g_operand, g_updates = ad.instantiate(g_operand), ad.instantiate(g_updates)
        gather_dn, sizes = _inverse_gather(dn, np.shape(updates), len(np.shape(operand)))
        initial = gather(operand, indices, gather_dn, sizes)
        target = gather(out, indices, gather_dn, sizes)
        successful = ew.eq(updates, target)
        retained = ew.eq(initial, target)
        num_updates = gather(
            scatter_add(_zeros_like(operand), indices,
                        ew.select(successful, _ones_like(updates), _zeros_like(updates)), dn),
            indices, gather_dn, sizes)
        num_refs = gather(scatter_add(_zeros_like(operand), indices, _ones_like(updates), dn),
                          indices, gather_dn, sizes)
        updates_normalizer = ew.select(retained, 1.0 / (num_updates + 1), 1.0 / num_updates)
        updates_coef = ew.select(successful, updates_normalizer, _zeros_like(updates))
        operand_normalizer = ew.select(retained, 1.0 / (num_updates + 1),
                                       _zeros_like(num_updates))
        operand_coef = (-1.0 + operand_normalizer) / num_refs
        target_tangents = gather(g_operand, indices, gather_dn, sizes)
        tangent_updates = target_tangents * operand_coef + g_updates * updates_coef
        tangent = scatter_add(g_operand, indices, tangent_updates, dn,
                              indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode)
        return out, tangent
    return jvp


# -- scatter (set) ----------------------------------------------------------------------------

def _scatter_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, update_jaxpr: Any,
                 update_consts: Any, dimension_numbers: Any, indices_are_sorted: bool,
                 unique_indices: bool, mode: Any) -> tuple:
    """Unique indices: scatter the tangents alike.  Otherwise (which update wins is
    unspecified) tag each update with an id, scatter the ids, and keep exactly the operand
    elements and updates that survive, by scatter-adds of masked values (JAX's scheme)."""
    ad = _ad()
    if update_jaxpr is not None:
        raise NotImplementedError("scatter_apply JVP not implemented")
    operand, indices, updates = primals
    g_operand, _, g_updates = tangents
    dn = dimension_numbers
    params = dict(update_jaxpr=None, update_consts=update_consts, dimension_numbers=dn,
                  indices_are_sorted=indices_are_sorted, mode=mode)
    if type(g_operand) is ad.Zero and type(g_updates) is ad.Zero:
        out = scatter_p.bind(operand, indices, updates, unique_indices=unique_indices,
                             **params)
        return out, ad.Zero.like(out)
    g_operand, g_updates = ad.instantiate(g_operand), ad.instantiate(g_updates)
    if unique_indices:
        out = scatter_p.bind(operand, indices, updates, unique_indices=True, **params)
        return out, scatter_p.bind(g_operand, indices, g_updates, unique_indices=True, **params)
    from pyjax._src.primitives.shape import iota, reshape
    updates_shape = np.shape(updates)
    ids_shape = list(updates_shape)
    for d in dn.update_window_dims:
        ids_shape[d] = 1
    num_ids = math.prod(ids_shape)
    id_dtype = np.dtype(np.uint64) if num_ids > np.iinfo(np.uint32).max else \
        np.dtype(np.uint32)
    update_ids = ew.add(reshape(iota(id_dtype, num_ids), ids_shape),
                        _ones_like(updates, id_dtype))
    scattered_ids = scatter(_zeros_of(np.shape(operand), id_dtype), indices, update_ids, dn,
                            indices_are_sorted=indices_are_sorted,
                            unique_indices=unique_indices, mode=mode)
    gather_dn, sizes = _inverse_gather(dn, updates_shape, len(np.shape(operand)))
    gathered_ids = gather(scattered_ids, indices, dimension_numbers=gather_dn,
                          slice_sizes=sizes)
    masked_operand = ew.select(ew.eq(scattered_ids, _zeros_like(scattered_ids)), operand,
                               _zeros_like(operand))
    masked_updates = ew.select(ew.eq(update_ids, gathered_ids), updates, _zeros_like(updates))
    masked_g_operand = ew.select(ew.eq(scattered_ids, _zeros_like(scattered_ids)), g_operand,
                                 _zeros_like(g_operand))
    masked_g_updates = ew.select(ew.eq(update_ids, gathered_ids), g_updates,
                                 _zeros_like(g_updates))
    out = scatter_add(masked_operand, indices, masked_updates, dimension_numbers=dn,
                      indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                      mode=mode)
    tangent = scatter_add(masked_g_operand, indices, masked_g_updates, dimension_numbers=dn,
                          indices_are_sorted=indices_are_sorted,
                          unique_indices=unique_indices, mode=mode)
    return out, tangent


def _scatter_transpose(ct: Any, operand: Any, indices: Any, updates: Any, *,
                       update_jaxpr: Any, update_consts: Any, dimension_numbers: Any,
                       indices_are_sorted: bool, unique_indices: bool, mode: Any) -> list:
    """Operand: the cotangent with the overwritten windows zeroed; updates: those windows."""
    ad = _ad()
    if not unique_indices:
        raise NotImplementedError("scatter transpose is only implemented where "
                                  "unique_indices=True")
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval) if ad.is_undefined(operand) else None, None,
                ad.Zero(updates.aval) if ad.is_undefined(updates) else None]
    updates_shape = _shape_of(updates)
    operand_t = update_t = None
    if ad.is_undefined(operand):
        operand_t = scatter(ct, indices, _zeros_of(updates_shape, dtypes.dtype_and_weak(ct)[0]),
                            dimension_numbers=dimension_numbers,
                            indices_are_sorted=indices_are_sorted, unique_indices=True,
                            mode=mode)
    if ad.is_undefined(updates):
        gather_dn, sizes = _inverse_gather(dimension_numbers, updates_shape, len(np.shape(ct)))
        update_t = gather(ct, indices, dimension_numbers=gather_dn, slice_sizes=sizes,
                          mode=mode, fill_value=0)
    return [operand_t, None, update_t]


def _register_ad_rules() -> None:
    dynamic_slice_p.jvp = _dynamic_slice_jvp
    dynamic_slice_p.transpose = _dynamic_slice_transpose
    dynamic_update_slice_p.jvp = _dynamic_update_slice_jvp
    dynamic_update_slice_p.transpose = _dynamic_update_slice_transpose
    gather_p.jvp = _gather_jvp
    gather_p.transpose = _in_backward_pass(_gather_transpose)
    for prim in (scatter_add_p, scatter_sub_p):
        prim.jvp = _scatter_params(prim)
        prim.transpose = _scatter_addsub_transpose(prim)
    scatter_mul_p.jvp = _scatter_mul_jvp
    scatter_mul_p.transpose = _in_backward_pass(_scatter_mul_transpose)
    scatter_min_p.jvp = _scatter_extremal_jvp(scatter_min_p)
    scatter_max_p.jvp = _scatter_extremal_jvp(scatter_max_p)
    scatter_p.jvp = _scatter_jvp
    scatter_p.transpose = _scatter_transpose


_register_ad_rules()


# ---------------------------------------------------------------------------------------------
# Batching (JAX's rules): the batch axis becomes an offset (operand only), an index batch
# dimension (indices only) or a batching dimension of both.  dynamic_slice and
# dynamic_update_slice with batched operands or indices become gathers and scatters.
# Dimension numbers built with NumPy arithmetic keep NumPy integers, as JAX's do (they print as
# `np.int64(1)`).
# ---------------------------------------------------------------------------------------------

def _plus1(dims: Sequence[int]) -> tuple:
    return tuple(np.add(1, dims))


def _gather_batch(vals: Sequence[Any], dims: Sequence[Any], *, dimension_numbers: Any,
                  slice_sizes: tuple, unique_indices: bool, indices_are_sorted: bool,
                  mode: Any, fill_value: Any) -> tuple:
    from pyjax._src.transforms.batching import move_axis
    (operand, indices), (operand_dim, indices_dim) = vals, dims
    dn = dimension_numbers
    if indices_dim is None:  # the batch axis is one more window dimension, taken whole
        operand = move_axis(operand, operand_dim, 0)
        new = GatherDimensionNumbers(
            offset_dims=(0,) + _plus1(dn.offset_dims),
            collapsed_slice_dims=_plus1(dn.collapsed_slice_dims),
            start_index_map=_plus1(dn.start_index_map),
            operand_batching_dims=_plus1(dn.operand_batching_dims),
            start_indices_batching_dims=dn.start_indices_batching_dims)
        return gather(operand, indices, new, (np.shape(operand)[0], *slice_sizes),
                      unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                      mode=mode, fill_value=fill_value), 0
    indices = move_axis(indices, indices_dim, 0)
    if operand_dim is None:  # one more batch dimension of the indices
        new = GatherDimensionNumbers(
            offset_dims=tuple(1 + d for d in dn.offset_dims),
            collapsed_slice_dims=dn.collapsed_slice_dims,
            start_index_map=dn.start_index_map,
            operand_batching_dims=dn.operand_batching_dims,
            start_indices_batching_dims=_plus1(dn.start_indices_batching_dims))
        # several examples may index one array: no longer sorted or unique
        return gather(operand, indices, new, slice_sizes, unique_indices=False,
                      indices_are_sorted=False, mode=mode, fill_value=fill_value), 0
    operand = move_axis(operand, operand_dim, 0)
    new = GatherDimensionNumbers(
        offset_dims=_plus1(dn.offset_dims),
        collapsed_slice_dims=_plus1(dn.collapsed_slice_dims),
        start_index_map=_plus1(dn.start_index_map),
        operand_batching_dims=(0,) + _plus1(dn.operand_batching_dims),
        start_indices_batching_dims=(0,) + _plus1(dn.start_indices_batching_dims))
    lead = 0 if np.shape(operand)[0] == 0 else 1
    return gather(operand, indices, new, (lead, *slice_sizes), unique_indices=unique_indices,
                  indices_are_sorted=indices_are_sorted, mode=mode,
                  fill_value=fill_value), 0


def _scatter_batch(prim: Any) -> Callable:
    def rule(vals: Sequence[Any], dims: Sequence[Any], *, update_jaxpr: Any,
             update_consts: Any, dimension_numbers: Any, indices_are_sorted: bool,
             unique_indices: bool, mode: Any) -> tuple:
        """Operand and updates get the batch axis first (broadcast when unbatched); it is a
        window dimension when the indices are unbatched, else a batching dimension."""
        from pyjax._src.transforms.batching import bdim_at_front
        (operand, indices, updates), (operand_dim, indices_dim, updates_dim) = vals, dims
        dn = dimension_numbers
        size = next(np.shape(v)[d] for v, d in zip(vals, dims) if d is not None)
        operand = bdim_at_front(operand, operand_dim, size)
        updates = bdim_at_front(updates, updates_dim, size)
        if indices_dim is None:
            new = ScatterDimensionNumbers(
                update_window_dims=(0,) + _plus1(dn.update_window_dims),
                inserted_window_dims=_plus1(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=_plus1(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=_plus1(dn.operand_batching_dims),
                scatter_indices_batching_dims=dn.scatter_indices_batching_dims)
        else:
            indices = bdim_at_front(indices, indices_dim, size)
            new = ScatterDimensionNumbers(
                update_window_dims=_plus1(dn.update_window_dims),
                inserted_window_dims=_plus1(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=_plus1(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=(0,) + _plus1(dn.operand_batching_dims),
                scatter_indices_batching_dims=(0,) + _plus1(dn.scatter_indices_batching_dims))
        return prim.bind(operand, indices, updates, update_jaxpr=update_jaxpr,
                         update_consts=update_consts, dimension_numbers=new,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode=mode), 0
    return rule


def _batch_start_indices(starts: Sequence[Any], dims: Sequence[Any]) -> tuple[Any, Any]:
    """The scalar start indices as one index vector: (n,) when none is batched, else
    (batch, n) with its batch axis first."""
    from pyjax._src.primitives.shape import broadcast, broadcast_in_dim, concatenate
    if not starts:
        return np.array([], np.int32), None
    batched = [np.shape(s)[d] for s, d in zip(starts, dims) if d is not None]
    if not batched:
        return concatenate([broadcast(s, (1,)) for s in starts], 0), None
    columns = [broadcast_in_dim(s, (batched[0], 1), (0,) if d is not None else ())
               for s, d in zip(starts, dims)]
    return concatenate(columns, 1), 0


def _dynamic_slice_batch(vals: Sequence[Any], dims: Sequence[Any], *, slice_sizes: tuple
                         ) -> tuple:
    """A gather of one window per example (clamped, as dynamic_slice clamps)."""
    operand, *starts = vals
    operand_dim, *start_dims = dims
    rank = np.ndim(operand) - (0 if operand_dim is None else 1)
    window = tuple(range(rank))
    dn = GatherDimensionNumbers(offset_dims=window, collapsed_slice_dims=(),
                                start_index_map=window)
    index, index_dim = _batch_start_indices(starts, start_dims)
    return _gather_batch([operand, index], [operand_dim, index_dim], dimension_numbers=dn,
                         slice_sizes=slice_sizes, unique_indices=True, indices_are_sorted=True,
                         mode=GatherScatterMode.CLIP, fill_value=None)


def _dynamic_update_slice_batch(vals: Sequence[Any], dims: Sequence[Any]) -> tuple:
    """A scatter of one window per example (clamped), by vmap of the unbatched scatter."""
    from pyjax._src.transforms.batching import vmap
    operand, update, *starts = vals
    operand_dim, update_dim, *start_dims = dims
    update_shape = np.shape(update) if update_dim is None else \
        tuple(np.delete(np.shape(update), update_dim))
    window = tuple(range(len(update_shape)))
    dn = ScatterDimensionNumbers(update_window_dims=window, inserted_window_dims=(),
                                 scatter_dims_to_operand_dims=window)
    index, index_dim = _batch_start_indices(starts, start_dims)

    def one(o: Any, i: Any, u: Any) -> Any:
        return scatter(o, i, u, dn, indices_are_sorted=True, unique_indices=True,
                       mode=GatherScatterMode.CLIP)
    return vmap(one, in_axes=(operand_dim, index_dim, update_dim), out_axes=0)(
        operand, index, update), 0


def _register_batch_rules() -> None:
    dynamic_slice_p.batch = _dynamic_slice_batch
    dynamic_update_slice_p.batch = _dynamic_update_slice_batch
    gather_p.batch = _gather_batch
    for prim in (scatter_p, scatter_add_p, scatter_sub_p, scatter_mul_p, scatter_min_p,
                 scatter_max_p):
        prim.batch = _scatter_batch(prim)


_register_batch_rules()

# how splits over mesh axes flow (parallel/propagation.py): a scatter's result is its operand
# updated, laid out as it is; dynamic slices keep every axis's split
for _prim in (scatter_p, scatter_add_p, scatter_sub_p, scatter_mul_p, scatter_min_p,
              scatter_max_p):
    _prim.sharding_rule = propagation.operand_layout
dynamic_slice_p.sharding_rule = propagation.same_size_axes
dynamic_update_slice_p.sharding_rule = propagation.same_size_axes
