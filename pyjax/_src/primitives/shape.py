"""Shape primitives: broadcast_in_dim, reshape, transpose, squeeze, concatenate, stack, unstack,
tile, pad, rev, slice, reorder, iota.  They move data without arithmetic; shape errors are
raised by the abstract rules so that eager and traced code fail alike.  All but iota are
linear: their transposes (at the end of the file) are JAX's, so differentiated programs print
alike (reorder, pmap's ppermute, is no JAX primitive: its transpose is the inverse order).
"""
from __future__ import annotations

import builtins
import math
import types
from typing import Any, Sequence

import numpy as np

from pyjax._src import errors
from pyjax._src.backend.specialized import exact
from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import pp_eqn_standard
from pyjax._src.core.trace import trace_state
from pyjax._src.parallel import propagation
from pyjax._src.primitives._rules import make_primitive
from pyjax._src.transforms import ad


def _ints(xs: Sequence[Any]) -> tuple[int, ...]:
    return tuple(int(x) for x in xs)


# -- broadcast_in_dim -------------------------------------------------------------------------

def _broadcast_in_dim_abstract(x: ShapedArray, *, shape: tuple, broadcast_dimensions: tuple,
                               sharding: Any = None) -> ShapedArray:
    # the checks, their order and their texts are JAX's shape rule's
    for name, value in (("shape", shape), ("broadcast_dimensions", broadcast_dimensions)):
        if any(d < 0 for d in value):
            raise TypeError(f"broadcast_in_dim {name} must have every element be nonnegative, "
                            f"got {value}.")
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got "
            f"broadcast_dimensions {broadcast_dimensions} for operand ndim {x.ndim}.")
    if len(shape) < x.ndim:
        raise TypeError(
            "broadcast_in_dim target broadcast shape must have equal or higher rank to the "
            f"operand shape; got operand ndim {x.ndim} and target broadcast ndim {len(shape)}.")
    if not set(broadcast_dimensions) <= set(range(len(shape))):
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must be a subset of output dimensions, got "
            f"{broadcast_dimensions} for operand ndim {x.ndim} and shape {shape}.")
    if any(od not in (1, shape[d]) for d, od in zip(broadcast_dimensions, x.shape)):
        raise TypeError(
            "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
            f"corresponding dimensions in the target broadcast shape; got operand of shape "
            f"{x.shape}, target broadcast shape {shape}, broadcast_dimensions "
            f"{broadcast_dimensions} ")
    if len(set(broadcast_dimensions)) != len(broadcast_dimensions):
        raise TypeError("broadcast_in_dim broadcast_dimensions must not contain duplicates, "
                        f"got broadcast_dimensions {broadcast_dimensions}")
    return ShapedArray(shape, x.dtype, x.weak_type)


def _broadcast_in_dim_impl(x: np.ndarray, *, shape: tuple, broadcast_dimensions: tuple,
                           sharding: Any = None) -> np.ndarray:
    if list(broadcast_dimensions) != sorted(broadcast_dimensions):  # axes land out of order
        order = np.argsort(broadcast_dimensions)
        x, broadcast_dimensions = np.transpose(x, order), tuple(np.take(broadcast_dimensions,
                                                                        order))
    expanded = [1] * len(shape)
    for d, size in zip(broadcast_dimensions, np.shape(x)):
        expanded[d] = size
    x = np.asarray(x).reshape(expanded)
    if x.shape == tuple(shape):  # only size-1 axes added: the reshaped view is the result
        return x
    return np.broadcast_to(x, shape)


def _broadcast_in_dim_specialize(x: ShapedArray, *, shape: tuple, broadcast_dimensions: tuple,
                                 sharding: Any = None) -> Any:
    """The impl for operands of x's type with axes in order: one reshape (and broadcast),
    worked out once (eager plans); None otherwise."""
    if list(broadcast_dimensions) != sorted(broadcast_dimensions):
        return None
    expanded = [1] * len(shape)
    for d, size in zip(broadcast_dimensions, x.shape):
        expanded[d] = size
    expanded, shape = tuple(expanded), tuple(shape)
    if expanded == shape:
        reshape = exact(lambda b: b.reshape(expanded))
        reshape.reshapes_to = shape  # (a reduction before it may keep its axes instead)
        return reshape
    if x.size and x.dtype.isbuiltin:
        return exact(_broadcast_view(x, expanded, shape))
    return exact(lambda b: np.broadcast_to(b.reshape(expanded), shape))


def _broadcast_view(x: ShapedArray, expanded: tuple, shape: tuple) -> Any:
    """broadcast_in_dim of a C-contiguous operand of x's type: the read-only view with zero
    strides on the new axes, built directly on its buffer (half np.broadcast_to's time, which
    was most of a small pmap psum); other operands go through np.broadcast_to."""
    contiguous = np.empty(x.shape, x.dtype).strides
    strides, step = [], x.dtype.itemsize
    for size, wanted in zip(reversed(expanded), reversed(shape)):
        strides.append(step if size == wanted else 0)
        step *= size
    strides = tuple(reversed(strides))
    dtype = x.dtype

    def view(b: np.ndarray) -> np.ndarray:
        if b.strides != contiguous:
            return np.broadcast_to(b.reshape(expanded), shape)
        out = np.ndarray(shape, dtype, b, 0, strides)
        out.setflags(write=False)  # (a third cheaper than through out.flags)
        return out

    return view


def _broadcast_in_dim_pp(eqn: Any, context: Any) -> Any:
    shown = ["broadcast_dimensions"] if eqn.params["broadcast_dimensions"] else []
    return pp_eqn_standard(eqn, context, shown)


broadcast_in_dim_p = make_primitive("broadcast_in_dim", _broadcast_in_dim_impl,
                                    _broadcast_in_dim_abstract)
broadcast_in_dim_p.specialize = _broadcast_in_dim_specialize
broadcast_in_dim_p.pp_rule = _broadcast_in_dim_pp


def broadcast_in_dim(operand: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int],
                     sharding: Any = None) -> Any:
    """Place operand's axes at `broadcast_dimensions` of an array of `shape`."""
    shape, dims = _ints(shape), _ints(broadcast_dimensions)
    if np.ndim(operand) == len(shape) and tuple(np.shape(operand)) == shape and \
            dims == tuple(range(len(shape))) and hasattr(operand, "aval") and not (
                shape and _keeps_identity(trace_state.trace, operand)):
        return operand
    return broadcast_in_dim_p.bind(operand, shape=shape, broadcast_dimensions=dims, sharding=None)


def _keeps_identity(trace: Any, operand: Any) -> bool:
    """Whether an identity broadcast of `operand` is staged: JAX's staging forwards it (its
    forwarding rule), but the partial evaluation staging a function to transpose records it
    when its operand is unknown (and transposes it to a reduce_sum over no axes)."""
    return getattr(trace, "keeps_identity_broadcasts", False) and trace.is_unknown(operand)


def broadcast(operand: Any, sizes: Sequence[int]) -> Any:
    """Add leading axes of `sizes`."""
    n = len(sizes)
    return broadcast_in_dim(operand, (*sizes, *np.shape(operand)),
                            tuple(range(n, n + np.ndim(operand))))


# -- reshape ----------------------------------------------------------------------------------

def _reshape_abstract(x: ShapedArray, *, new_sizes: tuple, dimensions: Any,
                      sharding: Any = None) -> ShapedArray:
    if any(d < 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}.")
    if dimensions is not None and set(dimensions) != set(range(x.ndim)):
        raise TypeError("reshape dimensions must be a permutation of operand dimensions, got "
                        f"dimensions {dimensions} for shape {x.shape}.")
    if math.prod(new_sizes) != x.size:  # JAX's shape rule lets this through; XLA rejects it
        raise errors.lowering_verifier_error(
            f"number of output elements ({math.prod(new_sizes)}) doesn't match expected number "
            f"of elements ({x.size})")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


def _reshape_impl(x: np.ndarray, *, new_sizes: tuple, dimensions: Any,
                  sharding: Any = None) -> np.ndarray:
    if dimensions is not None:
        x = np.transpose(x, dimensions)
    return np.reshape(x, new_sizes)


reshape_p = make_primitive("reshape", _reshape_impl, _reshape_abstract)


def reshape(operand: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None,
            sharding: Any = None) -> Any:
    """Reshape (optionally transposing by `dimensions` first); no-op when nothing changes."""
    new_sizes = _ints(new_sizes)
    dims = None if dimensions is None or tuple(dimensions) == tuple(range(np.ndim(operand))) \
        else _ints(dimensions)
    same = tuple(np.shape(operand)) == new_sizes
    if dims is None and same and np.shape(operand) and hasattr(operand, "aval"):
        return operand  # as JAX: a no-op reshape binds nothing, except for 0-d operands
    return reshape_p.bind(operand, new_sizes=new_sizes, dimensions=dims, sharding=None)


# -- transpose --------------------------------------------------------------------------------

def _transpose_abstract(x: ShapedArray, *, permutation: tuple) -> ShapedArray:
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError("transpose permutation isn't a permutation of operand dimensions, got "
                        f"permutation {permutation} for operand shape {x.shape}.")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


def _transpose_impl(x: np.ndarray, *, permutation: tuple) -> np.ndarray:
    """The axes permuted; trailing axes beyond the permutation (a key array's key data) stay."""
    if x.ndim != len(permutation):
        permutation = permutation + tuple(range(len(permutation), x.ndim))
    return x.transpose(permutation)


transpose_p = make_primitive("transpose", _transpose_impl, _transpose_abstract)


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    """Permute axes; the identity permutation binds nothing."""
    permutation = _ints(permutation)
    if permutation == tuple(range(np.ndim(operand))) and hasattr(operand, "aval"):
        return operand
    return transpose_p.bind(operand, permutation=permutation)


# -- squeeze / expand_dims --------------------------------------------------------------------

def _squeeze_abstract(x: ShapedArray, *, dimensions: tuple) -> ShapedArray:
    for d in dimensions:
        if not 0 <= d < x.ndim or x.shape[d] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not equal to "
                             f"one, got shape={x.shape} and dimensions={dimensions}")
    shape = tuple(s for i, s in enumerate(x.shape) if i not in dimensions)
    return ShapedArray(shape, x.dtype, x.weak_type)


squeeze_p = make_primitive("squeeze",
                           lambda x, *, dimensions: np.reshape(x, _squeezed(np.shape(x), dimensions)),
                           _squeeze_abstract)


def _squeezed(shape: tuple, dims: tuple) -> tuple:
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    """Remove the given size-1 axes."""
    ndim = np.ndim(array)
    dims = tuple(sorted(int(d) % ndim if ndim else int(d) for d in dimensions))
    if not dims and hasattr(array, "aval"):
        return array
    return squeeze_p.bind(array, dimensions=dims)


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """Insert size-1 axes at `dimensions` (positions in the result), via broadcast_in_dim."""
    shape = list(np.shape(array))
    out_ndim = len(shape) + len(dimensions)
    dims = sorted(int(d) % out_ndim for d in dimensions)
    for d in dims:
        shape.insert(d, 1)
    kept = tuple(i for i in range(out_ndim) if i not in dims)
    return broadcast_in_dim(array, tuple(shape), kept)


# -- concatenate / stack / tile ---------------------------------------------------------------

def _concatenate_abstract(*xs: ShapedArray, dimension: int) -> ShapedArray:
    if not xs:
        raise TypeError("concatenate requires a non-empty sequence of operands")
    first = xs[0]
    if any(x.ndim != first.ndim for x in xs):
        raise TypeError("Cannot concatenate arrays with different numbers of dimensions: got "
                        f"{', '.join(str(x.shape) for x in xs)}.")
    if not 0 <= dimension < first.ndim:
        raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for shapes "
                        f"{', '.join(str(x.shape) for x in xs)}.")
    for x in xs:
        if any(a != b for i, (a, b) in enumerate(zip(x.shape, first.shape)) if i != dimension):
            raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions "
                            f"other than the one being concatenated: concatenating along "
                            f"dimension {dimension} for shapes "
                            f"{', '.join(str(x.shape) for x in xs)}.")
    if len({x.dtype for x in xs}) > 1:
        raise TypeError(
            "lax.concatenate requires arguments to have the same dtypes, got "
            f"{', '.join(x.dtype.name for x in xs)}. (Tip: jnp.concatenate is a similar "
            "function that does automatic type promotion on inputs).")
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(tuple(shape), first.dtype, all(x.weak_type for x in xs))


concatenate_p = make_primitive(
    "concatenate", lambda *xs, dimension: np.concatenate(xs, axis=dimension),
    _concatenate_abstract)


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    """Join arrays of one dtype along an existing axis."""
    if len(operands) == 1 and hasattr(operands[0], "aval"):
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))


def _stack_abstract(*xs: ShapedArray, axis: int) -> ShapedArray:
    if not xs:
        raise ValueError("Need at least one array to stack.")
    if len({x.shape for x in xs}) > 1:
        raise ValueError("All input arrays must have the same shape.")
    if len({x.dtype for x in xs}) > 1:
        raise TypeError("lax.stack requires arguments to have the same dtypes, got "
                        f"{', '.join(x.dtype.name for x in xs)}.")
    shape = list(xs[0].shape)
    shape.insert(axis, len(xs))
    return ShapedArray(tuple(shape), xs[0].dtype, all(x.weak_type for x in xs))


def _stack_specialize(*xs: ShapedArray, axis: int) -> Any:
    """np.stack of arrays of one type (rank 1 or more), for eager plans, without its Python
    layers: the operands joined, then given the new axis (along axis 0), else each given the
    new axis, then joined along it (np.stack's own way)."""
    shape = xs[0].shape
    if not shape:
        return None
    if axis == 0:
        joined = (len(xs), *shape)
        return exact(lambda *bs: np.concatenate(bs).reshape(joined))
    expanded = (*shape[:axis], 1, *shape[axis:])
    return exact(lambda *bs: np.concatenate([b.reshape(expanded) for b in bs], axis))


stack_p = make_primitive("stack", lambda *xs, axis: np.stack(xs, axis=axis), _stack_abstract)
stack_p.specialize = _stack_specialize


def _unstack_abstract(x: ShapedArray, *, axis: int) -> list[ShapedArray]:
    if x.ndim == 0:
        raise ValueError("unstack requires arrays with rank > 0, however a scalar array of "
                         f"shape {x.shape} was passed.")
    shape = list(x.shape)
    count = shape.pop(axis)
    return [ShapedArray(tuple(shape), x.dtype, x.weak_type) for _ in range(count)]


def _unstack_impl(x: np.ndarray, *, axis: int) -> list[np.ndarray]:
    return [np.take(x, i, axis=axis) for i in range(x.shape[axis])]


#: The inverse of stack (the transpose of stack_p, as in JAX).
unstack_p = make_primitive("unstack", _unstack_impl, _unstack_abstract, multiple_results=True)


def unstack(operand: Any, axis: int = 0) -> tuple:
    """The slices of `operand` along `axis`, as a tuple (lax.unstack)."""
    ndim = np.ndim(operand)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return tuple(unstack_p.bind(operand, axis=int(axis) % ndim))


def _tile_abstract(x: ShapedArray, *, reps: tuple) -> ShapedArray:
    if x.ndim != len(reps):
        raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)={len(reps)} "
                        f"and x.ndim={x.ndim}.")
    return ShapedArray(tuple(s * r for s, r in zip(x.shape, reps)), x.dtype, x.weak_type)


tile_p = make_primitive("tile", lambda x, *, reps: np.tile(x, reps), _tile_abstract)


# -- pad / rev / slice ------------------------------------------------------------------------

def _pad_abstract(x: ShapedArray, pad_value: ShapedArray, *, padding_config: tuple
                  ) -> ShapedArray:
    if pad_value.shape:
        raise ValueError("padding_value must be a scalar; got "
                         f"np.shape(padding_value)={pad_value.shape}")
    if x.dtype != pad_value.dtype:
        raise TypeError("pad operand and padding_value must be same dtype: got "
                        f"{x.dtype} and {pad_value.dtype}.")
    if len(padding_config) != x.ndim:
        raise ValueError("length of padding_config must equal the number of axes of operand, "
                         f"got padding_config {padding_config} for operand shape {x.shape}")
    if any(interior < 0 for _, _, interior in padding_config):
        raise ValueError(f"interior padding in padding_config must be nonnegative, got "
                         f"padding_config {padding_config}")
    shape = tuple(int(lo + hi + size + max(size - 1, 0) * interior)
                  for size, (lo, hi, interior) in zip(x.shape, padding_config))
    if any(out < 0 for out in shape):
        raise ValueError(f"Dimension size after padding is not at least 0, got result shape "
                         f"{shape}, for padding_config {padding_config} and operand shape "
                         f"{x.shape}")
    return ShapedArray(shape, x.dtype, x.weak_type and pad_value.weak_type)


def _pad_impl(x: np.ndarray, pad_value: np.ndarray, *, padding_config: tuple) -> np.ndarray:
    for axis, (lo, hi, interior) in enumerate(padding_config):
        size = x.shape[axis]
        if interior and size > 1:
            shape = list(x.shape)
            shape[axis] = size + (size - 1) * interior
            spread = np.full(shape, pad_value, x.dtype)
            index = [builtins.slice(None)] * x.ndim
            index[axis] = builtins.slice(None, None, interior + 1)
            spread[tuple(index)] = x
            x = spread
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths, constant_values=pad_value)
        index = [builtins.slice(None)] * x.ndim
        index[axis] = builtins.slice(-lo if lo < 0 else 0, x.shape[axis] + hi if hi < 0 else None)
        x = x[tuple(index)]
    return x


pad_p = make_primitive("pad", _pad_impl, _pad_abstract)


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """Pad each axis with (low, high, interior) copies of `padding_value` (negative low/high
    crop)."""
    config = tuple(tuple(c) for c in padding_config)  # NumPy ints stay, as jaxprs show them
    return pad_p.bind(operand, padding_value, padding_config=config)


def _rev_abstract(x: ShapedArray, *, dimensions: tuple) -> ShapedArray:
    if any(not 0 <= d < x.ndim for d in dimensions) or len(set(dimensions)) != len(dimensions):
        raise ValueError(f"rev dimensions must be unique and in range, got {dimensions} for "
                         f"operand of rank {x.ndim}")
    return x


rev_p = make_primitive("rev", lambda x, *, dimensions: np.flip(x, dimensions) if dimensions
                       else x, _rev_abstract)


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    """Reverse the order of elements along `dimensions`."""
    return rev_p.bind(operand, dimensions=_ints(dimensions))


def _reorder_abstract(x: ShapedArray, *, axis: int, order: tuple) -> ShapedArray:
    if not 0 <= axis < x.ndim or sorted(order) != list(range(x.shape[axis])):
        raise TypeError(f"reorder order must be a permutation of axis {axis}'s "
                        f"positions, got {order} for operand shape {x.shape}")
    return x


def _reorder_specialize(x: ShapedArray, *, axis: int, order: tuple) -> Any:
    """The impl for operands of x's type: one `take` along the axis, its index made once."""
    index = np.array(order, np.intp)
    return exact(lambda b: b.take(index, axis))


#: x's slices along `axis` in the order `order` lists them, written once into a new buffer:
#: pmap's ppermute (a full permutation of the device axis: a ring shift), one NumPy call where
#: slices and a concatenate took three (not a JAX primitive; JAX's vmap stages a gather)
reorder_p = make_primitive(
    "reorder", lambda x, *, axis, order: x.take(np.array(order, np.intp), axis),
    _reorder_abstract)
reorder_p.specialize = _reorder_specialize


def reorder(operand: Any, axis: int, order: Sequence[int]) -> Any:
    """`operand`'s slices along `axis` in the order `order` lists them (a permutation)."""
    return reorder_p.bind(operand, axis=int(axis), order=_ints(order))


def _slice_abstract(x: ShapedArray, *, start_indices: tuple, limit_indices: tuple,
                    strides: tuple | None) -> ShapedArray:
    if len(start_indices) != x.ndim or len(limit_indices) != x.ndim:
        raise TypeError(f"slice start_indices must have length equal to the number of "
                        f"dimensions of the operand, got indices {start_indices} for operand "
                        f"shape {x.shape}.")
    steps = strides or (1,) * x.ndim
    shape = []
    if any(hi > size for hi, size in zip(limit_indices, x.shape)):
        sizes = tuple(np.array(limit_indices) - np.array(start_indices))
        raise TypeError("slice slice_sizes must be less than or equal to operand shape, got "
                        f"slice_sizes {sizes} for operand shape {x.shape}.")
    if any(lo < 0 or hi < lo for lo, hi in zip(start_indices, limit_indices)):
        raise TypeError("slice start_indices must be non-negative and at most limit_indices, "
                        f"got start_indices {start_indices} and limit_indices {limit_indices}.")
    for size, lo, hi, step in zip(x.shape, start_indices, limit_indices, steps):
        shape.append(0 if hi <= lo else int((hi - lo + step - 1) // step))
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _slice_impl(x: np.ndarray, *, start_indices: tuple, limit_indices: tuple,
                strides: tuple | None) -> np.ndarray:
    steps = strides or (1,) * len(start_indices)
    return x[tuple(builtins.slice(lo, hi, st) for lo, hi, st in zip(start_indices, limit_indices, steps))]


def _slice_specialize(x: ShapedArray, *, start_indices: tuple, limit_indices: tuple,
                      strides: tuple | None) -> Any:
    """The impl for operands of x's type: NumPy's basic indexing with the slices made once
    (a tenth of the general impl's time; pmap's ring ppermute is two slices).  The leading
    Ellipsis makes a 0-d operand's result a view too, not a NumPy scalar."""
    steps = strides or (1,) * len(start_indices)
    index = (Ellipsis, *(builtins.slice(lo, hi, st)
                         for lo, hi, st in zip(start_indices, limit_indices, steps)))
    return exact(lambda b: b[index])


slice_p = make_primitive("slice", _slice_impl, _slice_abstract)
slice_p.specialize = _slice_specialize


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],  # noqa: A001
          strides: Sequence[int] | None = None) -> Any:
    """Static slice x[start:limit:stride] on every axis."""
    return slice_p.bind(operand, start_indices=_ints(start_indices),
                        limit_indices=_ints(limit_indices),
                        strides=None if strides is None else _ints(strides))


# -- iota -------------------------------------------------------------------------------------

def _iota_impl(*, dtype: np.dtype, shape: tuple, dimension: int, sharding: Any = None
               ) -> np.ndarray:
    line = np.arange(shape[dimension], dtype=dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return np.broadcast_to(line.reshape(expanded), shape)


def _iota_abstract(*, dtype: np.dtype, shape: tuple, dimension: int, sharding: Any = None
                   ) -> ShapedArray:
    if dtype == dtypes.bool_:
        raise TypeError("iota does not accept dtype bool. Accepted dtypes are subtypes of "
                        "integer, floating, complexfloating.")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota dimension must be between 0 and len(shape), got "
                         f"dimension={dimension} for shape {shape}")
    return ShapedArray(shape, dtype, False)


iota_p = make_primitive("iota", _iota_impl, _iota_abstract)


def iota(dtype: Any, size: int) -> Any:
    """0, 1, ..., size-1."""
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int, sharding: Any = None
                     ) -> Any:
    """Counting along `dimension` of an array of `shape`."""
    return iota_p.bind(dtype=dtypes.check_user_dtype(dtype), shape=_ints(shape),
                       dimension=int(dimension), sharding=None)


# ---------------------------------------------------------------------------------------------
# Autodiff: every primitive here but iota is linear.  The transposes are JAX's, down to the
# NumPy integers some of them leave in the params (printed as `np.int64(3)`, as JAX prints them).
# ---------------------------------------------------------------------------------------------

def _dtype(x: Any) -> np.dtype:
    return dtypes.dtype_and_weak(x)[0]


def _zero_scalar(x: Any) -> Any:
    """A strong 0 of x's dtype (a literal when staged), as JAX's `_const(x, 0)`."""
    from pyjax._src.core.array import ArrayImpl
    return ArrayImpl(np.zeros((), _dtype(x)), False)


def _zero_cts(ct: Any, args: Sequence[Any]) -> list | None:
    """The cotangents when `ct` is a symbolic zero (None otherwise)."""
    cts = ct if isinstance(ct, (list, tuple)) else [ct]
    if all(type(c) is ad.Zero for c in cts):
        return [ad.Zero(a.aval) if ad.is_undefined(a) else None for a in args]
    return None


def _broadcast_in_dim_transpose(ct: Any, operand: Any, *, shape: tuple,
                                broadcast_dimensions: tuple, sharding: Any) -> list:
    """Sum over the broadcast axes; size-1 operand axes come back by expand_dims."""
    if not ad.is_undefined(operand):
        return [None]
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval)]
    from pyjax._src.primitives.reductions import reduce_sum
    unit_dims = [i for i, size in enumerate(operand.aval.shape) if size == 1]
    kept = tuple(d for i, d in enumerate(broadcast_dimensions) if i not in unit_dims)
    axes = tuple(i for i in range(len(shape)) if i not in kept)
    return [expand_dims(reduce_sum(ct, axes), unit_dims)]


def _reshape_transpose(ct: Any, operand: Any, *, new_sizes: tuple, dimensions: Any,
                       sharding: Any) -> list:
    shape = operand.aval.shape
    if dimensions is None:
        return [reshape(ct, shape)]
    permuted = reshape(ct, tuple(shape[d] for d in dimensions))
    return [transpose(permuted, np.argsort(dimensions))]


def _unstack_transpose(cts: Sequence[Any], operand: Any, *, axis: int) -> list:
    if all(type(c) is ad.Zero for c in cts):
        return [ad.Zero(operand.aval)]
    return [stack_p.bind(*[ad.instantiate(c) for c in cts], axis=axis)]


def _tile_transpose(ct: Any, operand: Any, *, reps: tuple) -> list:
    """Fold each tiled axis into (reps, size) and sum the copies."""
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval)]
    if not ad.is_undefined(operand):
        return [None]
    from pyjax._src.primitives.reductions import reduce_sum
    shape = operand.aval.shape
    folded = reshape(ct, tuple(k for pair in zip(reps, shape) for k in pair))
    return [reduce_sum(folded, tuple(2 * i for i in range(len(shape))))]


def _concatenate_transpose(ct: Any, *operands: Any, dimension: int) -> list:
    """Split the cotangent into the operands' pieces."""
    zero = _zero_cts(ct, operands)
    if zero is not None:
        return zero
    from pyjax._src.primitives.extra import split_p
    sizes = tuple((o.aval.shape if ad.is_undefined(o) else np.shape(o))[dimension]
                  for o in operands)
    return split_p.bind(ct, sizes=sizes, axis=dimension)


def _stack_transpose(ct: Any, *operands: Any, axis: int) -> list:
    zero = _zero_cts(ct, operands)
    if zero is not None:
        return zero
    return unstack_p.bind(ct, axis=axis)


def _pad_transpose(ct: Any, operand: Any, padding_value: Any, *, padding_config: tuple
                   ) -> list:
    """Operand: undo the padding (negative edges, then a strided slice for the interior);
    padding value: everything the operand did not receive."""
    zero = _zero_cts(ct, (operand, padding_value))
    if zero is not None:
        return zero
    from pyjax._src.primitives.elementwise import sub
    from pyjax._src.primitives.reductions import reduce_sum
    lo, hi, interior = (tuple(c) for c in zip(*padding_config)) if padding_config \
        else ((), (), ())
    ndim = len(np.shape(ct))

    def unpad() -> Any:
        config = tuple(zip(np.negative(lo), np.negative(hi), np.zeros_like(interior)))
        unpadded = pad_p.bind(ct, _zero_scalar(ct), padding_config=config)
        return slice_p.bind(unpadded, start_indices=tuple(np.zeros_like(lo)),
                            limit_indices=tuple(np.shape(unpadded)),
                            strides=tuple(np.add(interior, 1)))

    t_operand = unpad() if ad.is_undefined(operand) else None
    t_value = None
    if ad.is_undefined(padding_value):
        inner = t_operand if t_operand is not None else unpad()
        t_value = sub(reduce_sum(ct, tuple(range(ndim))),
                      reduce_sum(inner, tuple(range(ndim))))
    return [t_operand, t_value]


def _slice_transpose(ct: Any, operand: Any, *, start_indices: tuple, limit_indices: tuple,
                     strides: tuple | None) -> list:
    """Pad the cotangent with zeros back to the operand's shape (interior for strides)."""
    if type(ct) is ad.Zero:
        return [ad.Zero(operand.aval)]
    shape = operand.aval.shape
    if strides is None or np.all(np.equal(strides, 1)):
        pads = zip(start_indices, np.subtract(shape, limit_indices), (0,) * len(start_indices))
    else:
        ct_shape = np.array(np.shape(ct))
        real_limits = np.add(start_indices, np.where(
            ct_shape == 0, 0, np.add(1, np.multiply(np.subtract(ct_shape, 1), strides))))
        pads = zip(start_indices, np.subtract(shape, real_limits), np.subtract(strides, 1))
    return [pad_p.bind(ct, _zero_scalar(ct), padding_config=tuple(pads))]


ad.deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)
ad.deflinear(reshape_p, _reshape_transpose)
ad.deflinear(transpose_p, lambda ct, x, *, permutation: [
    transpose(ct, np.argsort(permutation))])
ad.deflinear(squeeze_p, lambda ct, x, *, dimensions: [expand_dims(ct, dimensions)])
ad.deflinear(concatenate_p, _concatenate_transpose)
ad.deflinear(stack_p, _stack_transpose)
ad.deflinear(unstack_p, _unstack_transpose)
ad.deflinear(tile_p, _tile_transpose)
ad.deflinear(pad_p, _pad_transpose)
ad.deflinear(rev_p, lambda ct, x, *, dimensions: [rev(ct, dimensions)])
ad.deflinear(reorder_p, lambda ct, x, *, axis, order: [
    reorder(ct, axis, np.argsort(order))])
ad.deflinear(slice_p, _slice_transpose)
ad.defjvp_zero(iota_p)


# ---------------------------------------------------------------------------------------------
# Batching (JAX's rules).  Axes that JAX computes with NumPy (np.add, np.delete) stay NumPy
# integers in the params, so that batched programs print as JAX's do (`np.int64(2)`).
# ---------------------------------------------------------------------------------------------

def _batch_size(vals: Sequence[Any], dims: Sequence[Any]) -> int:
    return next(np.shape(v)[d] for v, d in zip(vals, dims) if d is not None)


def _broadcast_in_dim_batch(vals: Sequence[Any], dims: Sequence[Any], *, shape: tuple,
                            broadcast_dimensions: tuple, sharding: Any) -> tuple:
    from pyjax._src.transforms.batching import move_axis
    (x,), (d,) = vals, dims
    size = np.shape(x)[d]
    kept = (0,) + tuple(np.add(1, broadcast_dimensions))
    return broadcast_in_dim_p.bind(move_axis(x, d, 0), shape=(size, *shape),
                                   broadcast_dimensions=kept, sharding=None), 0


def _reshape_batch(vals: Sequence[Any], dims: Sequence[Any], *, new_sizes: tuple,
                   dimensions: Any, sharding: Any) -> tuple:
    from pyjax._src.transforms.batching import move_axis
    (x,), (d,) = vals, dims
    x = move_axis(x, d, 0)
    if dimensions is not None:
        dimensions = (0,) + tuple(np.add(1, dimensions))
    return reshape(x, (np.shape(x)[0], *new_sizes), dimensions), 0


def _transpose_batch(vals: Sequence[Any], dims: Sequence[Any], *, permutation: tuple) -> tuple:
    (x,), (d,) = vals, dims
    perm = (d,) + tuple(p if p < d else p + 1 for p in permutation)
    return transpose(x, perm), 0


def _squeeze_batch(vals: Sequence[Any], dims: Sequence[Any], *, dimensions: tuple) -> tuple:
    from pyjax._src.transforms.batching import move_axis
    (x,), (d,) = vals, dims
    return squeeze(move_axis(x, d, 0), tuple(np.add(1, dimensions))), 0


def _at_front(vals: Sequence[Any], dims: Sequence[Any]) -> list:
    """Batched operands with their axis first; unbatched ones broadcast (lax.broadcast)."""
    from pyjax._src.transforms.batching import move_axis
    size = _batch_size(vals, dims)
    return [move_axis(v, d, 0) if d is not None else broadcast(v, (size,))
            for v, d in zip(vals, dims)]


def _concatenate_batch(vals: Sequence[Any], dims: Sequence[Any], *, dimension: int) -> tuple:
    return concatenate(_at_front(vals, dims), dimension + 1), 0


def _stack_batch(vals: Sequence[Any], dims: Sequence[Any], *, axis: int) -> tuple:
    first = dims[0]
    if first is not None and all(d == first for d in dims):
        if axis <= first:
            return stack_p.bind(*vals, axis=axis), first + 1
        return stack_p.bind(*vals, axis=axis + 1), first
    return stack_p.bind(*_at_front(vals, dims), axis=axis + 1), 0


def _unstack_batch(vals: Sequence[Any], dims: Sequence[Any], *, axis: int) -> tuple:
    (x,), (d,) = vals, dims
    if axis < d:
        outs = unstack_p.bind(x, axis=axis)
        return outs, [d - 1] * len(outs)
    outs = unstack_p.bind(x, axis=axis + 1)
    return outs, [d] * len(outs)


def _tile_batch(vals: Sequence[Any], dims: Sequence[Any], *, reps: tuple) -> tuple:
    (x,), (d,) = vals, dims
    new_reps = list(reps)
    new_reps.insert(d, 1)
    return tile_p.bind(x, reps=tuple(new_reps)), d


def _pad_batch(vals: Sequence[Any], dims: Sequence[Any], *, padding_config: tuple) -> tuple:
    """A batched padding value: pad with zeros, then select the value where the mask (a padded
    array of True) is False."""
    from pyjax._src.primitives.elementwise import select
    from pyjax._src.primitives.extra import full_like
    from pyjax._src.transforms.batching import move_axis
    (x, value), (d, value_dim) = vals, dims
    if d is None:
        x, d = broadcast(x, (np.shape(value)[value_dim],)), 0
    config = list(padding_config)
    config.insert(d, (0, 0, 0))
    if value_dim is None:
        return pad(x, value, config), d
    value = move_axis(value, value_dim, 0)
    padded = pad(x, full_like(x, 0, shape=()), config)
    mask = pad(full_like(x, True, np.bool_), False, config)
    spread = broadcast_in_dim(value, np.shape(padded), (d,))
    return select(mask, padded, spread), d


def _rev_batch(vals: Sequence[Any], dims: Sequence[Any], *, dimensions: tuple) -> tuple:
    (x,), (d,) = vals, dims
    return rev(x, [i + 1 if i >= d else i for i in dimensions]), d


def _reorder_batch(vals: Sequence[Any], dims: Sequence[Any], *, axis: int, order: tuple
                   ) -> tuple:
    (x,), (d,) = vals, dims
    return reorder(x, axis + 1 if axis >= d else axis, order), d


def _slice_batch(vals: Sequence[Any], dims: Sequence[Any], *, start_indices: tuple,
                 limit_indices: tuple, strides: tuple | None) -> tuple:
    (x,), (d,) = vals, dims
    starts, limits = list(start_indices), list(limit_indices)
    starts.insert(d, 0)
    limits.insert(d, np.shape(x)[d])
    steps = None
    if strides is not None:
        steps = list(strides)
        steps.insert(d, 1)
    return slice(x, starts, limits, steps), d


broadcast_in_dim_p.batch = _broadcast_in_dim_batch
reshape_p.batch = _reshape_batch
transpose_p.batch = _transpose_batch
squeeze_p.batch = _squeeze_batch
concatenate_p.batch = _concatenate_batch
stack_p.batch = _stack_batch
unstack_p.batch = _unstack_batch
tile_p.batch = _tile_batch
pad_p.batch = _pad_batch
rev_p.batch = _rev_batch
reorder_p.batch = _reorder_batch
slice_p.batch = _slice_batch


# -- how splits over mesh axes flow (parallel/propagation.py runs these rules) ------------------

def _broadcast_in_dim_sharding(eqn: Any, ins: list, sizes: dict) -> list:
    shape, dims = eqn.params["shape"], eqn.params["broadcast_dimensions"]
    operand = eqn.invars[0].aval.shape
    out: list = [None] * len(shape)
    if ins[0] is not None:
        for i, d in enumerate(dims):
            if operand[i] == shape[d]:
                out[d] = ins[0][i]
    return [tuple(out)]


def _transpose_sharding(eqn: Any, ins: list, sizes: dict) -> list:
    return [tuple(ins[0][p] for p in eqn.params["permutation"])]


def _squeeze_sharding(eqn: Any, ins: list, sizes: dict) -> list:
    rank = len(eqn.invars[0].aval.shape)
    dropped = {d % rank for d in eqn.params["dimensions"]}
    return [tuple(e for i, e in enumerate(ins[0]) if i not in dropped)]


def _reshape_sharding(eqn: Any, ins: list, sizes: dict) -> list:
    """On a mesh with Explicit axes, as JAX types a reshape that only adds or drops 1s, splits
    one axis or merges several into one (the split axis's mesh axes handed out major to
    minor); otherwise (and on Auto meshes, as GSPMD lays them out) axes before
    the first changed size keep their splits, and so does the first changed axis when its
    new size still divides evenly (its pieces are the same runs of elements)."""
    old, new = eqn.invars[0].aval.shape, eqn.params["new_sizes"]
    spec = ins[0]
    if [n for n in old if n != 1] == [n for n in new if n != 1]:  # only 1s added or dropped
        kept = iter(e for n, e in zip(old, spec) if n != 1)
        return [tuple(None if n == 1 else next(kept) for n in new)]
    if eqn.params.get("dimensions") is None and getattr(sizes, "explicit", False):
        typed = _reshape_one_axis_sharding(old, tuple(new), spec, sizes)
        if typed is not None:
            return [typed]
    out: list = [None] * len(new)
    k = 0
    while k < min(len(old), len(new)) and old[k] == new[k]:
        out[k] = spec[k]
        k += 1
    if (k < len(old) and k < len(new) and spec[k] is not None
            and math.prod(old[:k]) == math.prod(new[:k])
            and new[k] % math.prod(sizes[n] for n in propagation.names(spec[k])) == 0):
        out[k] = spec[k]
    return [tuple(out)]


def _reshape_one_axis_sharding(old: tuple, new: tuple, spec: tuple, sizes: dict) -> tuple | None:
    """JAX's rule for a reshape that splits one axis or merges several (None where it would
    raise)."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while (tail < min(len(old), len(new)) - head
           and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]):
        tail += 1
    old_mid, new_mid = old[head:len(old) - tail], new[head:len(new) - tail]
    if len(old_mid) == 1 and len(new_mid) > 1:  # one axis split into several
        names = tuple(_names_in_order(spec[head]))
        mid = _hand_out(names, new_mid, sizes)
    elif len(new_mid) == 1 and len(old_mid) > 1:  # several axes merged into one
        entries = list(spec[head:len(spec) - tail])
        while entries and entries[-1] is None:
            entries.pop()
        if None in entries:
            return None
        names = tuple(n for e in entries for n in _names_in_order(e))
        mid = _hand_out(names, new_mid, sizes)
    else:
        return None
    if mid is None:
        return None
    return tuple(spec[:head]) + mid + tuple(spec[len(spec) - tail:])


def _names_in_order(entry: Any) -> tuple:
    return () if entry is None else entry if isinstance(entry, tuple) else (entry,)


def _hand_out(names: tuple, out_sizes: tuple, sizes: dict) -> tuple | None:
    """Mesh axes `names`, major to minor, handed to the axes of `out_sizes` in order, each
    taking axes while its size is still split further (None if one does not divide)."""
    pending = iter(names)
    out = []
    for size in out_sizes:
        taken: list = []
        while size > 1:
            name = next(pending, None)
            if name is None:
                break
            size, rest = divmod(size, sizes[name])
            if rest:
                return None
            taken.append(name)
        out.append(None if not taken else taken[0] if len(taken) == 1 else tuple(taken))
    return None if next(pending, None) is not None else tuple(out)


def _stack_sharding(eqn: Any, ins: list, sizes: dict) -> list:
    """The operands' common split with an unsplit axis at `axis`."""
    rank = len(eqn.invars[0].aval.shape)
    merged = propagation.elementwise(types.SimpleNamespace(outvars=[types.SimpleNamespace(
        aval=eqn.invars[0].aval)], invars=eqn.invars), ins, sizes)[0]
    axis = eqn.params["axis"] % (rank + 1)
    return [merged[:axis] + (None,) + merged[axis:]]


def _unstack_sharding(eqn: Any, ins: list, sizes: dict) -> list:
    axis = eqn.params["axis"] % len(ins[0])
    return [ins[0][:axis] + ins[0][axis + 1:]] * len(eqn.outvars)


broadcast_in_dim_p.sharding_rule = _broadcast_in_dim_sharding
reshape_p.sharding_rule = _reshape_sharding
transpose_p.sharding_rule = _transpose_sharding
squeeze_p.sharding_rule = _squeeze_sharding
concatenate_p.sharding_rule = propagation.elementwise
stack_p.sharding_rule = _stack_sharding
unstack_p.sharding_rule = _unstack_sharding
for _prim in (pad_p, rev_p, reorder_p, slice_p):
    _prim.sharding_rule = propagation.same_size_axes
# iota has no operands, so it is never batched.
