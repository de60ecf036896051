"""jnp's index tricks (mgrid, ogrid, r_, c_, s_, index_exp, ix_), index helpers (indices,
diag/tril/triu/mask indices, ravel_multi_index, unravel_index) and the functions that pick or
place elements by index or condition (choose, select, piecewise, place, put, put_along_axis,
fill_diagonal), built as JAX 0.10.2 builds them.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src import errors
from pyjax._src.core import dtypes
from pyjax._src.core.trace import Tracer
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import reductions, ufuncs, util
from pyjax._src.numpy.manipulation import meshgrid
from pyjax._src.numpy.sorting import index_dtype_for_dim
from pyjax._src.numpy.util import check_arraylike, staged_as_jit
from pyjax._src.numpy.vectorize import vectorize
from pyjax._src.primitives import elementwise as lax
from pyjax._src.primitives import extra as lax_extra
from pyjax._src.primitives import shape as shp


def _ensure(name: str, *args: Any) -> list[Any]:
    check_arraylike(name, *args)
    return [util.as_operand(a) for a in args]


def _concrete(x: Any, context: str, force: Callable = lambda v: v) -> Any:
    """force(x's value); ConcretizationTypeError when x is an abstract tracer."""
    if isinstance(x, Tracer):
        value = x.concrete_value()
        if value is None:
            raise errors.ConcretizationTypeError(x, context)
        return force(value)
    return force(x)


# ---------------------------------------------------------------------------------------------
# mgrid / ogrid / r_ / c_ / s_ / index_exp
# ---------------------------------------------------------------------------------------------

def _make_1d_grid_from_slice(s: slice, op_name: str) -> Any:
    """arange(start, stop, step), or linspace with abs(step) points when step is complex."""
    start = _concrete(s.start, f"slice start of jnp.{op_name}") or 0
    stop = _concrete(s.stop, f"slice stop of jnp.{op_name}")
    step = _concrete(s.step, f"slice step of jnp.{op_name}") or 1
    if np.iscomplex(step):
        return lnp.linspace(start, stop, int(abs(step)))
    return lnp.arange(start, stop, step)


class _Mgrid:
    """jnp.mgrid[...]: a dense stack of coordinate grids built from slices."""

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _make_1d_grid_from_slice(key, op_name="mgrid")
        output = [_make_1d_grid_from_slice(k, op_name="mgrid") for k in key]
        output = util.promote_dtypes(*output)
        output_arr = meshgrid(*output, indexing="ij", sparse=False)
        if len(output_arr) == 0:
            return lnp.arange(0)
        return lnp.stack(output_arr, 0)


class _Ogrid:
    """jnp.ogrid[...]: open (sparse, broadcastable) coordinate grids built from slices."""

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _make_1d_grid_from_slice(key, op_name="ogrid")
        output = [_make_1d_grid_from_slice(k, op_name="ogrid") for k in key]
        output = util.promote_dtypes(*output)
        return meshgrid(*output, indexing="ij", sparse=True)


mgrid = _Mgrid()
ogrid = _Ogrid()


class _AxisConcat:
    """Concatenation by index syntax (r_, c_): items are arrays, scalars or slices (grids);
    a leading string directive sets 'axis,ndmin,trans1d' or the matrix form 'r'/'c'."""
    axis: int
    ndmin: int
    trans1d: int
    op_name: str

    def __getitem__(self, key: Any) -> Any:
        key_tup = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        directive = key_tup[0]
        if isinstance(directive, str):
            key_tup = key_tup[1:]
            if directive == "r":
                params[-1] = 0
            elif directive == "c":
                params[-1] = 1
            else:
                vec: list[Any] = directive.split(",")
                k = len(vec)
                vec = vec + params[k:] if k < 4 else vec[:3] + [params[-1]]
                try:
                    params = list(map(int, vec))
                except ValueError as err:
                    raise ValueError(f"could not understand directive {directive!r}") from err
        axis, ndmin, trans1d, matrix = params
        output = []
        for item in key_tup:
            if isinstance(item, slice):
                newobj = _make_1d_grid_from_slice(item, op_name=self.op_name)
                item_ndim = 0
            elif isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            else:
                newobj = lnp.array(item, copy=False)
                item_ndim = np.ndim(newobj)
            newobj = lnp.array(newobj, copy=False, ndmin=ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                shape_obj = tuple(range(ndmin))
                num_lshifts = ndmin - abs(ndmin + trans1d + 1) % ndmin  # mod: no overflow
                newobj = lnp.transpose(newobj, shape_obj[num_lshifts:] + shape_obj[:num_lshifts])
            output.append(newobj)
        res = lnp.concatenate(tuple(output), axis=axis)
        if matrix != -1 and np.ndim(res) == 1:
            res = lnp.expand_dims(res, matrix)  # a row (axis 0) or column (axis 1) matrix
        return res

    def __len__(self) -> int:
        return 0


class RClass(_AxisConcat):
    """jnp.r_: concatenate along the first axis (items at least 1-D)."""
    axis = 0
    ndmin = 1
    trans1d = -1
    op_name = "r_"


class CClass(_AxisConcat):
    """jnp.c_: concatenate along the last axis (1-D items become columns)."""
    axis = -1
    ndmin = 2
    trans1d = 0
    op_name = "c_"


r_ = RClass()
c_ = CClass()
s_ = np.s_
index_exp = np.index_exp


# ---------------------------------------------------------------------------------------------
# ix_ / indices / diag, tril, triu and mask indices
# ---------------------------------------------------------------------------------------------

def ix_(*args: Any) -> tuple[Any, ...]:
    """Open-mesh index arrays from 1-D sequences (for cross-product indexing)."""
    args = _ensure("ix", *args)
    n = len(args)
    output = []
    for i, a in enumerate(args):
        if np.ndim(a) != 1:
            raise ValueError("Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                             f"{tuple(np.shape(a))}")
        if np.dtype(a.dtype) == dtypes.bool_:
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        shape = [1] * n
        shape[i] = np.shape(a)[0]
        if np.size(a) == 0:  # NumPy gives empty index arrays an integer dtype
            output.append(lax_extra.full(shape, np.zeros((), np.intp)))
        else:
            output.append(shp.broadcast_in_dim(a, shape, (i,)))
    return tuple(output)


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    """The index grid of an array of shape `dimensions` (stacked, or sparse broadcastables)."""
    dtype = dtypes.check_user_dtype(int if dtype is None else dtype, "indices")
    dimensions = tuple(_concrete(d, "dimensions argument of jnp.indices", operator.index)
                       for d in dimensions)
    n = len(dimensions)
    output = []
    s = dimensions
    for i, dim in enumerate(dimensions):
        idx = shp.iota(dtype, dim)
        if sparse:
            s = (1,) * i + (dim,) + (1,) * (n - i - 1)
        output.append(shp.broadcast_in_dim(idx, s, (i,)))
    if sparse:
        return tuple(output)
    return lnp.stack(output, 0) if output else lnp.array([], dtype=dtype)


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    """Indices of the main diagonal of an n × ... × n array (ndim copies of arange(n))."""
    n = _concrete(n, "'n' argument of jnp.diag_indices()", operator.index)
    ndim = _concrete(ndim, "'ndim' argument of jnp.diag_indices()", operator.index)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (shp.iota(index_dtype_for_dim(n), n),) * ndim


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    """diag_indices for an array whose dimensions are all equal."""
    (arr,) = _ensure("diag_indices_from", arr)
    if not np.ndim(arr) >= 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(np.shape(arr))) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(np.shape(arr)[0], ndim=np.ndim(arr))


def _triu_size(n: int, m: int, k: int) -> int:
    """How many entries of an n × m array lie on or above diagonal k."""
    if k < 0:
        return n * m - _triu_size(m, n, 1 - k)
    if k >= m:
        return 0
    mk = min(n, m - k)
    return mk * (mk + 1) // 2 + mk * (m - k - mk)


def _dim(x: Any, what: str) -> int:
    return _concrete(x, f"{what} argument of jnp.triu_indices", operator.index)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the lower triangle (on and below diagonal k) of n × m."""
    n, k = _dim(n, "n"), _dim(k, "k")
    m = n if m is None else _dim(m, "m")
    return lnp.nonzero(lnp.tril(lnp.ones((n, m)), k=k), size=_triu_size(m, n, -k))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    """Row and column indices of the upper triangle (on and above diagonal k) of n × m."""
    n, k = _dim(n, "n"), _dim(k, "k")
    m = n if m is None else _dim(m, "m")
    return lnp.nonzero(lnp.triu(lnp.ones((n, m)), k=k), size=_triu_size(n, m, k))


def _shape_2d(name: str, arr: Any) -> tuple[int, ...]:
    if not hasattr(arr, "shape"):
        (arr,) = _ensure(name, arr)
    shape = tuple(arr.shape)
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """tril_indices for the shape of a 2-D array."""
    shape = _shape_2d("tril_indices_from", arr)
    return tril_indices(shape[0], k=k, m=shape[1])


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    """triu_indices for the shape of a 2-D array."""
    shape = _shape_2d("triu_indices_from", arr)
    return triu_indices(shape[0], k=k, m=shape[1])


def mask_indices(n: int, mask_func: Callable[[Any, int], Any], k: int = 0, *,
                 size: int | None = None) -> tuple[Any, Any]:
    """Indices where mask_func(ones((n, n)), k) is non-zero."""
    i, j = lnp.nonzero(mask_func(lnp.ones((n, n)), k), size=size)
    return i, j


# ---------------------------------------------------------------------------------------------
# ravel_multi_index / unravel_index
# ---------------------------------------------------------------------------------------------

def ravel_multi_index(multi_index: Sequence[Any], dims: Sequence[int], mode: str = "raise",
                      order: str = "C", *, dtype: Any = None) -> Any:
    """Flat indices of the coordinates `multi_index` into an array of shape `dims`."""
    assert len(multi_index) == len(dims), \
        f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}"
    dims = tuple(_concrete(d, "in `dims` argument of ravel_multi_index().", operator.index)
                 for d in dims)
    multi_index_arr = _ensure("ravel_multi_index", *multi_index)
    if dtype is None:
        dtype = dtypes.result_type(int, *multi_index_arr)
    else:
        dtype = dtypes.check_user_dtype(dtype, "ravel_multi_index")
    if not dtypes.is_integer(dtype):
        raise ValueError(f"dtype={dtype!r} is not an integer type.")
    if math.prod(dims) - 1 > np.iinfo(dtype).max:
        raise ValueError(
            f"jnp.ravel_multi_index: dtype={dtype!r} not large enough to hold flattened"
            f" index for dims={dims!r}. Use the dtype argument to pass a suitable"
            " dtype (e.g. dtype=np.min_scalar_type(prod(dims))).")
    for index in multi_index_arr:
        if mode == "raise":
            _concrete(index, "The error occurred because ravel_multi_index was jit-compiled"
                             " with mode='raise'. Use mode='wrap' or mode='clip' instead.")
        if not dtypes.is_integer(np.dtype(index.dtype)):
            raise TypeError("only int indices permitted")
    if mode == "raise":
        if any(reductions.any((i < 0) | (i >= d)) for i, d in zip(multi_index_arr, dims)):
            raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        multi_index_arr = [ufuncs.clip(i, 0, d - 1) for i, d in zip(multi_index_arr, dims)]
    elif mode == "wrap":
        multi_index_arr = [i % d for i, d in zip(multi_index_arr, dims)]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
    if order == "F":
        strides = np.cumprod((1,) + dims[:-1])
    elif order == "C":
        strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    result = lnp.array(0, dtype=dtype)
    for i, s in zip(multi_index_arr, strides):
        result = result + i.astype(dtype) * int(s)
    return result


def unravel_index(indices: Any, shape: Any) -> tuple[Any, ...]:
    """Coordinates into an array of `shape` of flat `indices` (out-of-range ones clipped)."""
    (indices_arr,) = _ensure("unravel_index", indices)
    try:
        shape = list(shape)  # kept as Python values: weak types survive
    except TypeError:
        shape = [shape]
    if any(np.ndim(s) != 0 for s in shape):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    out_indices: list[Any] = [0] * len(shape)
    for i, s in reversed(list(enumerate(shape))):
        indices_arr, out_indices[i] = ufuncs.divmod(indices_arr, s)
    oob_pos = indices_arr > 0
    if dtypes.is_unsigned(np.dtype(indices_arr.dtype)):
        oob_neg = lnp.asarray(False)  # unsigned ints cannot fall below the range
    else:
        oob_neg = indices_arr < -1
    return tuple(ufuncs.where(oob_pos, s - 1, ufuncs.where(oob_neg, 0, i))
                 for s, i in zip(shape, out_indices))


# ---------------------------------------------------------------------------------------------
# choose / select / piecewise
# ---------------------------------------------------------------------------------------------

def choose(a: Any, choices: Any, out: None = None, mode: str = "raise") -> Any:
    """Element i of choices[a[i]] (choices and a broadcast together)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    a, *choices = _ensure("choose", a, *choices)
    if not dtypes.is_integer(np.dtype(a.dtype)):
        raise ValueError("`a` array must be integer typed")
    n = len(choices)
    if mode == "raise":
        arr = _concrete(a, "The error occurred because jnp.choose was jit-compiled"
                           " with mode='raise'. Use mode='wrap' or mode='clip' instead.",
                        lnp.asarray)
        if reductions.any((arr < 0) | (arr >= n)):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        arr = lnp.asarray(a) % n
    elif mode == "clip":
        arr = ufuncs.clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    arr, *choices = lnp.broadcast_arrays(arr, *choices)
    return lnp.array(choices)[(arr,) + indices(np.shape(arr), sparse=True)]


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """From the first true condition's choice, elementwise (else `default`)."""
    if len(condlist) != len(choicelist):
        raise ValueError("condlist must have length equal to choicelist "
                         f"({len(condlist)} vs {len(choicelist)})")
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    check_arraylike("select", *condlist, *choicelist, default)
    condlist = [lnp.asarray(cond) for cond in condlist]
    choicelist = [lnp.asarray(choice) for choice in choicelist]
    default = lnp.asarray(default)
    # the default goes first, under a False condition: argmax of all-False is 0
    choicelist = util.promote_dtypes(default, *choicelist)
    conditions = lnp.stack(lnp.broadcast_arrays(False, *condlist))
    idx = reductions.argmax(conditions.astype(bool), axis=0)
    return lax.select_n(*lnp.broadcast_arrays(idx, *choicelist))


def piecewise(x: Any, condlist: Any, funclist: list[Any], *args: Any, **kw: Any) -> Any:
    """funclist[i](x) (or the constant) where condlist[i] holds; the extra function, or 0,
    where none does."""
    (x_arr,) = _ensure("piecewise", x)
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funclist = funclist[-1:] + funclist[:-1]
    elif nf == nc:
        funclist = [0] + list(funclist)
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are "
                         f"expected; got {nf}")
    consts = {i: c for i, c in enumerate(funclist) if not callable(c)}
    funcs = {i: f for i, f in enumerate(funclist) if callable(f)}
    return _piecewise(x_arr, lnp.asarray(condlist, dtype=bool), consts,
                      frozenset(funcs.items()), *args, **kw)


@staged_as_jit(static_argnames=("funcs",))
def _piecewise(x: Any, condlist: Any, consts: dict[int, Any], funcs: frozenset,
               *args: Any, **kw: Any) -> Any:
    """The branch index is the last true condition (cumsum + argmax); a vectorized switch."""
    funcdict = dict(funcs)
    funclist = [consts.get(i, funcdict.get(i)) for i in range(len(condlist) + 1)]
    branch = reductions.argmax(reductions.cumsum(lnp.concatenate(
        [lnp.zeros_like(condlist[:1]), condlist], 0), 0), 0)
    dtype = x.dtype

    def call(f: Callable) -> Callable:
        return lambda v: f(v, *args, **kw).astype(dtype)

    def const(c: Any) -> Callable:
        return lambda v: lnp.array(c, dtype=dtype)

    from pyjax._src.primitives.control_flow import switch  # loaded on first use (issue 16)
    branches = [call(f) if callable(f) else const(f) for f in funclist]
    return vectorize(switch, excluded=(1,))(branch, branches, x)


# ---------------------------------------------------------------------------------------------
# place / put / put_along_axis / fill_diagonal (functional: inplace=False is required)
# ---------------------------------------------------------------------------------------------

def _tile_to_size(arr: Any, size: int) -> Any:
    """The 1-D arr repeated (and cut) to exactly `size` elements."""
    if np.size(arr) < size:
        arr = lnp.tile(arr, int(np.ceil(size / np.size(arr))))
    return arr[:size] if np.size(arr) > size else arr


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Any:
    """A copy of arr with vals (cycled) written, in order, where mask is true."""
    data, mask_arr, vals_arr = _ensure("place", arr, mask, vals)
    vals_arr = lnp.ravel(vals_arr)
    if inplace:
        raise ValueError(
            "jax.numpy.place cannot modify arrays in-place, because JAX arrays are immutable. "
            "Pass inplace=False to instead return an updated array.")
    if np.size(data) != np.size(mask_arr):
        raise ValueError("place: arr and mask must be the same size")
    if not np.size(vals_arr):
        raise ValueError("Cannot place values from an empty array")
    if not np.size(data):
        return data
    idx = ufuncs.where(lnp.ravel(mask_arr), size=np.size(mask_arr),
                       fill_value=np.size(mask_arr))[0]
    vals_arr = _tile_to_size(vals_arr, len(idx))
    return lnp.ravel(data).at[idx].set(vals_arr, mode="drop").reshape(np.shape(data))


def put(a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True) -> Any:
    """A copy of `a` with v (cycled) written at the flat indices `ind`."""
    if inplace:
        raise ValueError(
            "jax.numpy.put cannot modify arrays in-place, because JAX arrays are immutable. "
            "Pass inplace=False to instead return an updated array.")
    arr, ind_arr, _ = _ensure("put", a, ind, v)
    ind_arr = lnp.ravel(ind_arr)
    v_arr = lnp.ravel(v)
    if not np.size(arr) or not np.size(ind_arr) or not np.size(v_arr):
        return arr
    v_arr = _tile_to_size(v_arr, len(ind_arr))
    if mode is None:
        scatter_mode = "drop"
    elif mode == "clip":
        ind_arr = ufuncs.clip(ind_arr, 0, np.size(arr) - 1)
        scatter_mode = "promise_in_bounds"
    elif mode == "wrap":
        ind_arr = ind_arr % np.size(arr)
        scatter_mode = "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    return arr.at[unravel_index(ind_arr, np.shape(arr))].set(v_arr, mode=scatter_mode)


@staged_as_jit(static_argnames=("axis", "inplace", "mode"))
def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None,
                   inplace: bool = True, *, mode: str | None = None) -> Any:
    """A copy of arr with values written at `indices` along `axis` (take_along_axis's dual)."""
    if inplace:
        raise ValueError(
            "jax.numpy.put_along_axis cannot modify arrays in-place, because JAX arrays"
            "are immutable. Pass inplace=False to instead return an updated array.")
    arr, indices, values = _ensure("put_along_axis", arr, indices, values)
    original_axis, original_shape = axis, np.shape(arr)
    if axis is None:
        arr = lnp.ravel(arr)
        axis = 0
    if np.ndim(arr) != np.ndim(indices):
        raise ValueError("put_along_axis arguments 'arr' and 'indices' must have same ndim. "
                         f"Got arr.ndim={np.ndim(arr)} and indices.ndim={np.ndim(indices)}.")
    try:
        values = lax_extra.broadcast_to(values, np.shape(indices))
    except ValueError:
        raise ValueError(
            "put_along_axis argument 'values' must be broadcastable to 'indices'. Got "
            f"values.shape={tuple(np.shape(values))} and "
            f"indices.shape={tuple(np.shape(indices))}.") from None
    result = arr.at[_make_along_axis_idx(np.shape(arr), indices, axis)].set(values, mode=mode)
    if original_axis is None:
        result = result.reshape(original_shape)
    return result


def _make_along_axis_idx(shape: Sequence[int], idx: Any, axis: int) -> tuple[Any, ...]:
    """The sparse index grid of `shape` with `idx` in place of the `axis` entry."""
    grid = list(indices(shape, sparse=True))
    grid[axis % len(shape)] = idx
    return tuple(grid)


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    """A copy of `a` with its main diagonal set to val (cycled when val is an array)."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    a, val = _ensure("fill_diagonal", a, val)
    if np.ndim(a) < 2:
        raise ValueError("array must be at least 2-d")
    if np.ndim(a) > 2 and not all(n == np.shape(a)[0] for n in np.shape(a)[1:]):
        raise ValueError("All dimensions of input must be of equal length")
    n = min(np.shape(a))
    idx = diag_indices(n, np.ndim(a))
    return a.at[idx].set(val if np.ndim(val) == 0 else _tile_to_size(lnp.ravel(val), n))
