"""jnp array creation, shape manipulation, sorting and products (dot, matmul, einsum).

Each function follows JAX 0.10's recipe (which lax ops, in which order, which are jitted), so
traced programs print the same jaxprs as JAX's.
"""
from __future__ import annotations

import builtins
import collections
import functools
import math
import operator
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src import caches, errors
from pyjax._src.core import dtypes
from pyjax._src.core.array import Array, ArrayImpl
from pyjax._src.core.trace import Tracer
from pyjax._src.numpy import ufuncs
from pyjax._src.parallel.placement import place_created, with_out_sharding
from pyjax._src.parallel.sharding import unplaced
from pyjax._src.numpy import util
from pyjax._src.backend.eager_plans import planned
from pyjax._src.numpy.fast_products import fast_product
from pyjax._src.numpy.util import canonicalize_axis, check_arraylike, staged_as_jit
from pyjax._src.primitives import dot as dot_prims
from pyjax._src.primitives import elementwise as lax
from pyjax._src.primitives import extra as lax_extra
from pyjax._src.primitives import indexing as slicing
from pyjax._src.primitives import reductions as red
from pyjax._src.primitives import shape as shp
from pyjax._src.transforms.jit import jit

pi, e, inf, nan, euler_gamma = np.pi, np.e, np.inf, np.nan, np.euler_gamma
newaxis = None
iscomplexobj = ufuncs.iscomplexobj


def _ensure(name: str, x: Any) -> Any:
    check_arraylike(name, x)
    return util.as_operand(x)


def _index_tuple(x: Any) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of ints."""
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(operator.index(i) for i in x)


def _invalid_shape(shape: Any) -> TypeError:
    message = f"Shapes must be 1D sequences of concrete values of integer type, got {shape}."
    tracers = [d for d in shape if isinstance(d, Tracer)]
    if tracers:
        message += ("\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller "
                    "subfunctions." + errors._tracer_context(tracers[0]))
    return TypeError(message)


def canonicalize_shape(shape: Any) -> tuple[int, ...]:
    """A user's shape (an int, a 0-d array or a sequence of them) as a tuple of ints."""
    if not isinstance(shape, (tuple, list)) and np.ndim(shape) == 0:
        shape = (shape,)
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise _invalid_shape(tuple(shape)) from None


def _concrete(x: Any, context: str) -> Any:
    """x's value, raising ConcretizationTypeError for an abstract tracer."""
    if isinstance(x, Tracer):
        value = x.concrete_value()
        if value is None:
            raise errors.ConcretizationTypeError(x, context)
        return value
    return x


# ---------------------------------------------------------------------------------------------
# array / asarray
# ---------------------------------------------------------------------------------------------

def _leaves(obj: Any) -> list:
    if isinstance(obj, (list, tuple)):
        return [leaf for item in obj for leaf in _leaves(item)]
    return [obj]


def _check_python_ints(leaves: list, dtype: np.dtype) -> None:
    if dtype.kind not in "iu" or dtype.itemsize < 1:
        return
    info = np.iinfo(dtype)
    for leaf in leaves:
        if type(leaf) is int and not info.min <= leaf <= info.max:
            raise OverflowError(f"Python integer {leaf} out of bounds for {dtype.name}")


def array(object: Any, dtype: Any = None, copy: bool = True, order: str | None = "K",  # noqa: A002
          ndmin: int = 0, *, device: Any = None, out_sharding: Any = None) -> Any:
    """An Array from Python scalars (weak), nested sequences, NumPy arrays or Arrays (laid
    out by `device` or `out_sharding` when given)."""
    if device is not None or out_sharding is not None:
        if (device is None and not copy and isinstance(object, np.ndarray) and ndmin <= object.ndim
                and (dtype is None or np.dtype(dtype) == object.dtype)):
            # as in JAX: checked, but a NumPy array taken without a copy is left unplaced
            place_created(None, None, out_sharding, "jnp.array")
            return unplaced(array(object, dtype, copy, order, ndmin))
        else:
            return place_created(array(object, dtype, copy, order, ndmin), device, out_sharding,
                                 "jnp.array")
    if order is not None and order != "K":
        raise NotImplementedError("Only implemented for order='K'")
    if hasattr(object, "__jax_array__"):
        object = object.__jax_array__()
    if dtype is None and ndmin == 0:
        if isinstance(object, Tracer) and object.concrete_value() is None:
            return lax_extra.array_copy(object) if copy else object
        if isinstance(object, Array) and not isinstance(object.dtype, np.dtype):
            return lax_extra.array_copy(object) if copy else object  # PRNG key arrays
        if type(object) in dtypes.python_scalar_dtypes or isinstance(object, np.generic):
            return util.as_operand(object)
    want = None if dtype is None else dtypes.check_user_dtype(dtype, "array")
    if want is not None and type(object) in _HOST_SCALARS and ndmin == 0:
        return ArrayImpl(_host_array(object, [object], want), False)  # fold_in's message
    weak = dtype is None and (type(object) in (int, float, complex) or (
        isinstance(object, Array) and object.weak_type))
    leaves = _leaves(object)
    if builtins.any(leaf is None for leaf in leaves):
        raise ValueError("None is not a valid value for jnp.array")
    leaves = [leaf.__jax_array__() if hasattr(leaf, "__jax_array__") else leaf
              for leaf in leaves]
    if want is None:
        want = dtypes.promote([dtypes.dtype_and_weak(_host_dtype_source(x)) for x in leaves])[0] \
            if leaves else dtypes.default_float_dtype()
    if not builtins.any(isinstance(leaf, Array) for leaf in leaves):
        out = _host_array(object, leaves, want)
    elif isinstance(object, Array):
        out = lax_extra.array_copy(object) if copy else object
    else:
        parts = [shp.expand_dims(array(x, dtype=want, copy=False), [0]) for x in object]
        while len(parts) > 16:
            parts = [shp.concatenate(parts[i:i + 16], 0) for i in range(0, len(parts), 16)]
        out = shp.concatenate(parts, 0)
    out = util.convert(out, want, weak)
    if ndmin > np.ndim(out):
        out = shp.expand_dims(out, list(range(ndmin - np.ndim(out))))
    return out


_HOST_SCALARS = frozenset((int, float, bool))


def _host_dtype_source(x: Any) -> Any:
    """What promotion should see for a leaf (strings and objects fail as in JAX)."""
    if isinstance(x, Array) or type(x) in dtypes.python_scalar_dtypes:
        return x
    buf = x if isinstance(x, (np.ndarray, np.generic)) else np.asarray(x)
    if buf.dtype.kind in "USO":
        raise TypeError(f"Value '{x}' with dtype {buf.dtype} is not a valid JAX array type. "
                        "Only arrays of numeric types are supported by JAX.")
    return buf


def _host_array(obj: Any, leaves: list, dtype: np.dtype) -> np.ndarray:
    """NumPy's conversion (a copy) of a nest of host values; ragged nests raise ValueError."""
    _check_python_ints(leaves, dtype)
    with np.errstate(over="ignore"):
        return np.array(obj, dtype=dtype)


def asarray(a: Any, dtype: Any = None, order: str | None = None, *, copy: bool | None = None,
            device: Any = None, out_sharding: Any = None) -> Any:
    """Like `array`, without copying Arrays that already have the requested dtype (`device`
    or `out_sharding` lays the result out)."""
    dtype = None if dtype is None else dtypes.check_user_dtype(dtype, "asarray")
    if device is not None or out_sharding is not None:
        return array(a, dtype=dtype, copy=bool(copy), order=order, device=device,
                     out_sharding=out_sharding)
    if type(a) is ArrayImpl and (dtype is None or np.dtype(a.dtype) == dtype and not a._weak):
        return a  # (a dtype asked for makes a weak Array strong, as in JAX)
    return array(a, dtype=dtype, copy=bool(copy), order=order)


def copy(a: Any, order: str | None = None) -> Any:
    """A copy of a."""
    return array(a, copy=True, order=order)


# ---------------------------------------------------------------------------------------------
# Creation
# ---------------------------------------------------------------------------------------------

@with_out_sharding("full")
@planned
def full(shape: Any, fill_value: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """An array of `shape` filled with `fill_value` (weak when the fill is a Python scalar)."""
    dtype = None if dtype is None else dtypes.check_user_dtype(dtype, "full")
    check_arraylike("full", fill_value)
    if np.ndim(fill_value) == 0:
        return lax_extra.full(canonicalize_shape(shape), fill_value, dtype)
    return lax_extra.broadcast_to(asarray(fill_value, dtype=dtype), canonicalize_shape(shape))


@with_out_sharding("jnp.zeros")
@planned
def zeros(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """An array of zeros (float32 by default)."""
    dtype = dtypes.check_user_dtype(float if dtype is None else dtype, "zeros")
    return lax_extra.full(canonicalize_shape(shape), 0, dtype)


@with_out_sharding("jnp.ones")
@planned
def ones(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """An array of ones (float32 by default)."""
    shape = canonicalize_shape(shape)
    dtype = dtypes.check_user_dtype(float if dtype is None else dtype, "ones")
    return lax_extra.full(shape, 1, dtype)


@with_out_sharding("jnp.zeros")
def empty(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """An array of zeros (JAX arrays are never uninitialised)."""
    return zeros(shape, None if dtype is None else dtypes.check_user_dtype(dtype, "empty"))


@with_out_sharding("full_like")
@planned
def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None, *,
              device: Any = None) -> Any:
    """An array shaped like `a` (or `shape`) filled with `fill_value`, of a's dtype by default."""
    if hasattr(a, "dtype") and hasattr(a, "shape"):
        check_arraylike("full_like", 0, fill_value)
    else:
        check_arraylike("full_like", a, fill_value)
    dtype = None if dtype is None else dtypes.check_user_dtype(dtype, "full_like")
    shape = None if shape is None else canonicalize_shape(shape)
    if np.ndim(fill_value) == 0:
        return lax_extra.full_like(a, fill_value, dtype, shape)
    shape = np.shape(a) if shape is None else shape
    dtype = dtypes.result_type(a) if dtype is None else dtype
    return lax_extra.broadcast_to(asarray(fill_value, dtype=dtype), shape)


@with_out_sharding("jnp.zeros_like")
@planned
def zeros_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    """Zeros shaped like `a`, of a's dtype by default."""
    if not (hasattr(a, "dtype") and hasattr(a, "shape")):
        check_arraylike("zeros_like", a)
    dtype = None if dtype is None else dtypes.check_user_dtype(dtype, "zeros_like")
    return lax_extra.full_like(a, 0, dtype,
                               None if shape is None else canonicalize_shape(shape))


@with_out_sharding("jnp.ones_like")
@planned
def ones_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    """Ones shaped like `a`, of a's dtype by default."""
    if not (hasattr(a, "dtype") and hasattr(a, "shape")):
        check_arraylike("ones_like", a)
    dtype = None if dtype is None else dtypes.check_user_dtype(dtype, "ones_like")
    return lax_extra.full_like(a, 1, dtype,
                               None if shape is None else canonicalize_shape(shape))


def empty_like(prototype: Any, dtype: Any = None, shape: Any = None, *,
               device: Any = None) -> Any:
    """Zeros shaped like `prototype`."""
    return zeros_like(prototype, dtype, shape)


@with_out_sharding("jnp.arange")
@planned
def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None, *,
           device: Any = None) -> Any:
    """Evenly spaced values in [start, stop): start + step * iota, like JAX."""
    if dtype is not None:
        dtype = dtypes.check_user_dtype(dtype, "arange")
    for value in (start, stop, step):
        if value is not None:
            check_arraylike("arange", value)
    start_name = "stop" if stop is None and step is None else "start"
    start = _concrete(start, f"It arose in the jnp.arange argument '{start_name}'")
    stop = _concrete(stop, "It arose in the jnp.arange argument 'stop'")
    step = _concrete(step, "It arose in the jnp.arange argument 'step'")
    for name, value in ((start_name, start), ("stop", stop), ("step", step)):
        if value is not None and np.ndim(value) != 0:
            raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={value}")
    if dtype is None:
        dtype = dtypes.result_type(start, *(x for x in (stop, step) if x is not None))
    if builtins.any(iscomplexobj(x) for x in (start, stop, step)):
        raise ValueError("Passing complex start/stop/step to jnp.arange is no longer supported "
                         "starting in JAX v0.10.0.")
    if stop is None:
        start, stop = 0, start
    if step is not None:
        working = dtypes.float32 if dtypes.is_float(dtype) and dtype.itemsize < 4 else dtype
        size = builtins.max(0, int(np.ceil((_py(stop) - _py(start)) / _py(step))))
        values = lax.add(util.convert(start, working, False),
                         lax.mul(util.convert(step, working, False),
                                 shp.broadcasted_iota(working, (size,), 0)))
        return util.convert(values, dtype, False)
    if _py(start) == 0:
        return shp.broadcasted_iota(dtype, (builtins.max(0, int(np.ceil(_py(stop)))),), 0)
    size = builtins.max(0, int(np.ceil(_py(stop) - _py(start))))
    return lax.add(util.convert(start, dtype, False),
                   shp.broadcasted_iota(dtype, (size,), 0))


def _py(x: Any) -> Any:
    return np.asarray(x).item()


# jit (not staged_as_jit) so that eager calls run compiled too: XLA turns the divisions by
# constants into multiplications, and JAX's eager linspace values come from that program
@jit(static_argnames=("num", "endpoint", "retstep", "dtype", "axis"))
def _linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
              retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    check_arraylike("linspace", start, stop)
    start, stop = util.as_operand(start), util.as_operand(stop)
    if dtype is None:
        dtype = dtypes.to_inexact_dtype(dtypes.result_type(start, stop))
    else:
        dtype = dtypes.check_user_dtype(dtype)
    computation_dtype = dtypes.to_inexact_dtype(dtype)
    start = astype(start, computation_dtype)
    stop = astype(stop, computation_dtype)
    bounds_shape = list(lax_extra.broadcast_shapes(np.shape(start), np.shape(stop)))
    broadcast_start = lax_extra.broadcast_to(start, bounds_shape)
    broadcast_stop = lax_extra.broadcast_to(stop, bounds_shape)
    axis = len(bounds_shape) + axis + 1 if axis < 0 else axis
    bounds_shape.insert(axis, 1)
    div = (num - 1) if endpoint else num
    if num > 1:
        delta = util.convert(stop - start, computation_dtype, False) / asarray(
            div, dtype=computation_dtype)
        iota_shape = [1] * len(bounds_shape)
        iota_shape[axis] = div
        real_dtype = dtypes.finfo(computation_dtype).dtype
        step = shp.iota(real_dtype, div).reshape(iota_shape) / asarray(div, real_dtype)
        step = astype(step, computation_dtype)
        out = (broadcast_start.reshape(bounds_shape) * (1 - step)
               + broadcast_stop.reshape(bounds_shape) * step)
        if endpoint:
            out = shp.concatenate([out, shp.expand_dims(broadcast_stop, (axis,))],
                                  canonicalize_axis(axis, out.ndim))
    elif num == 1:
        delta = asarray(np.nan if endpoint else stop - start, dtype=computation_dtype)
        out = broadcast_start.reshape(bounds_shape)
    else:
        empty_shape = list(lax_extra.broadcast_shapes(np.shape(start), np.shape(stop)))
        empty_shape.insert(axis, 0)
        delta = full((), np.nan, computation_dtype)
        out = empty(empty_shape, dtype)
    if dtypes.is_integer(dtype) and not dtypes.is_integer(np.dtype(out.dtype)):
        out = lax.floor(out)
    result = util.convert(out, dtype, False)
    return (result, delta) if retstep else result


@planned
def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0, *, device: Any = None
             ) -> Any:
    """`num` evenly spaced samples from start to stop."""
    num = operator.index(_concrete(num, "'num' argument of jnp.linspace"))
    axis = operator.index(_concrete(axis, "'axis' argument of jnp.linspace"))
    return _linspace(start, stop, num=num, endpoint=endpoint, retstep=retstep, dtype=dtype,
                     axis=axis)


@planned
def eye(N: int, M: int | None = None, k: Any = 0, dtype: Any = None, *,  # noqa: N803
        device: Any = None) -> Any:
    """A 2-D array with ones on the k-th diagonal."""
    dtype = dtypes.check_user_dtype(float if dtype is None else dtype, "eye")
    offset = _ensure("eye", k)
    if not (np.shape(offset) == () and dtypes.is_integer(np.dtype(offset.dtype))):
        raise ValueError(f"k must be a scalar integer; got {k}")
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    if n < 0 or m < 0:
        raise ValueError(f"negative dimensions are not allowed, got {N} and {M}")
    i = shp.broadcasted_iota(offset.dtype, (n, m), 0)
    j = shp.broadcasted_iota(offset.dtype, (n, m), 1)
    return astype(i + offset == j, dtype)


@planned
def identity(n: int, dtype: Any = None) -> Any:
    """The n x n identity matrix."""
    return eye(n, dtype=None if dtype is None else dtypes.check_user_dtype(dtype, "identity"))


def _tri_mask(dtype: np.dtype, shape: tuple[int, int], k: Any) -> Any:
    """1 where column <= row + k, as `dtype`."""
    offset = lax_extra.asarray(k)
    if not dtypes.is_integer(np.dtype(offset.dtype)):
        raise TypeError(f"offset must be an integer, got {k!r}")
    index_dtype = dtypes.int32 if builtins.max(shape) < 2**31 else dtypes.int64
    if np.dtype(offset.dtype).itemsize > index_dtype.itemsize:
        index_dtype = dtypes.int64
    mask = lax.ge(lax.add(shp.broadcasted_iota(index_dtype, shape, 0),
                          util.convert(offset, index_dtype, False)),
                  shp.broadcasted_iota(index_dtype, shape, 1))
    return util.convert(mask, dtype, False)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:  # noqa: N803
    """Lower-triangular ones: 1 where column <= row + k (float32 by default)."""
    dtype = dtypes.float32 if dtype is None else dtypes.check_user_dtype(dtype, "tri")
    return _tri_mask(dtype, (N, N if M is None else M), k)


@staged_as_jit(static_argnames=("k",))
def tril(m: Any, k: int = 0) -> Any:
    """m with the elements above the k-th diagonal zeroed."""
    m = _ensure("tril", m)
    if np.ndim(m) < 2:
        raise ValueError("Argument to jax.numpy.tril must be at least 2D")
    rows, cols = np.shape(m)[-2:]
    which = shp.broadcast(tri(rows, cols, k=k, dtype=bool), np.shape(m)[:-2])
    return lax.select(which, m, zeros_like(m))


@staged_as_jit(static_argnames=("k",))
def triu(m: Any, k: int = 0) -> Any:
    """m with the elements below the k-th diagonal zeroed."""
    m = _ensure("triu", m)
    if np.ndim(m) < 2:
        raise ValueError("Argument to jax.numpy.triu must be at least 2D")
    rows, cols = np.shape(m)[-2:]
    which = shp.broadcast(tri(rows, cols, k=k - 1, dtype=bool), np.shape(m)[:-2])
    return lax.select(which, zeros_like(m), m)


# ---------------------------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------------------------

def shape(a: Any) -> tuple[int, ...]:
    """The shape of a."""
    return tuple(np.shape(a))


def ndim(a: Any) -> int:
    """The number of axes of a."""
    return len(np.shape(a))


def size(a: Any, axis: int | None = None) -> int:
    """The number of elements of a (along `axis` if given)."""
    s = np.shape(a)
    return int(math.prod(s)) if axis is None else s[axis]


def compute_newshape(a: Any, newshape: Any) -> tuple[int, ...]:
    """The target shape of a reshape, with a -1 entry filled in."""
    original = newshape
    try:
        iter(newshape)
    except TypeError:
        newshape = [newshape]
    newshape = canonicalize_shape(newshape)
    arr_shape = tuple(np.shape(a))
    arr_size = math.prod(arr_shape)
    neg1s = [i for i, d in enumerate(newshape) if d == -1]
    if len(neg1s) > 1:
        raise TypeError("can only specify one unknown axis size with a `-1` value, got "
                        f"{original}")
    if neg1s:
        others = math.prod(d for d in newshape if d != -1)
        if others == 0 or arr_size % others:
            raise TypeError(f"cannot reshape array of shape {arr_shape} (size {arr_size}) into "
                            f"shape {original} because the product of specified axis sizes "
                            f"({others}) does not evenly divide {arr_size}")
        return tuple(arr_size // others if d == -1 else d for d in newshape)
    if arr_size != math.prod(newshape):
        raise TypeError(f"cannot reshape array of shape {arr_shape} (size {arr_size}) into "
                        f"shape {original} (size {math.prod(newshape)})")
    return newshape


def reshape_method(a: Any, shape: Any, order: str = "C") -> Any:
    """What `a.reshape(shape, order=order)` does."""
    newshape = compute_newshape(a, shape)
    if order == "C":
        return shp.reshape(a, newshape)
    if order == "F":
        dims = list(range(np.ndim(a)))[::-1]
        return transpose(shp.reshape(a, newshape[::-1], dims))
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


@planned
def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None,
            copy: Any = None) -> Any:
    """Change the shape; one dimension may be -1."""
    check_arraylike("reshape", a)
    if shape is None:
        shape = newshape
    if isinstance(a, (np.ndarray, np.generic)):  # JAX calls the method: NumPy in, NumPy view out
        return a.reshape(shape, order=order)
    return reshape_method(util.as_operand(a), shape, order)


@planned
def ravel(a: Any, order: str = "C") -> Any:
    """The flattened array."""
    a = _ensure("ravel", a)
    if order == "K":
        raise NotImplementedError("Ravel not implemented for order='K'.")
    return reshape(a, (np.size(a),), order)


@planned
def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    """Permute axes (reverse them by default)."""
    a = _ensure("transpose", a)
    nd = np.ndim(a)
    perm = list(range(nd))[::-1] if axes is None else axes
    return shp.transpose(a, [canonicalize_axis(i, nd) for i in perm])


def permute_dims(a: Any, /, axes: tuple[int, ...]) -> Any:
    """Permute axes to `axes`."""
    return shp.transpose(_ensure("permute_dims", a), axes)


def matrix_transpose(x: Any, /) -> Any:
    """Swap the last two axes."""
    x = _ensure("matrix_transpose", x)
    nd = np.ndim(x)
    if nd < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={nd}")
    return shp.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


@planned
def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    """Exchange two axes."""
    a = _ensure("swapaxes", a)
    perm = np.arange(np.ndim(a))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return shp.transpose(a, list(perm))


@planned
def moveaxis(a: Any, source: int | Sequence[int], destination: int | Sequence[int]) -> Any:
    """Move axes to new positions, keeping the order of the others."""
    a = _ensure("moveaxis", a)
    nd = np.ndim(a)
    src = tuple(canonicalize_axis(i, nd) for i in _index_tuple(source))
    dst = tuple(canonicalize_axis(i, nd) for i in _index_tuple(destination))
    if len(src) != len(dst):
        raise ValueError(f"Inconsistent number of elements: {len(src)} vs {len(dst)}")
    perm = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return shp.transpose(a, perm)


@planned
def squeeze(a: Any, axis: int | Sequence[int] | None = None) -> Any:
    """Remove size-1 axes (all of them, or those named by `axis`)."""
    a = _ensure("squeeze", a)
    if axis is None:
        dims = tuple(i for i, d in enumerate(np.shape(a)) if d == 1)
    else:
        nd = np.ndim(a)
        dims = tuple(sorted(canonicalize_axis(i, nd) for i in _index_tuple(axis)))
    return shp.squeeze(a, dims)


@planned
def expand_dims(a: Any, axis: int | Sequence[int]) -> Any:
    """Insert size-1 axes at `axis`."""
    a = _ensure("expand_dims", a)
    axes = _index_tuple(axis)
    out_nd = np.ndim(a) + len(axes)
    dims = [canonicalize_axis(i, out_nd) for i in axes]
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {dims}")
    return shp.expand_dims(a, dims)


def broadcast_to(array: Any, shape: Any) -> Any:
    """`array` broadcast to `shape` by NumPy's rules."""
    check_arraylike("broadcast_to", array)
    return lax_extra.broadcast_to(util.as_operand(array), canonicalize_shape(shape))


def broadcast_arrays(*args: Any) -> list[Any]:
    """The arguments broadcast to their common shape."""
    check_arraylike("broadcast_arrays", *args)
    return ufuncs._broadcast_arrays(*(util.as_operand(a) for a in args))


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The common broadcast shape."""
    return lax_extra.broadcast_shapes(*((s,) if isinstance(s, int) else s for s in shapes))


@planned
def concatenate(arrays: Any, axis: int | None = 0, dtype: Any = None) -> Any:
    """Join arrays along an existing axis (flattening them first when axis is None)."""
    if isinstance(arrays, (np.ndarray, Array)):
        return _concatenate_array(arrays, axis, dtype)
    check_arraylike("concatenate", *arrays)
    arrays = [util.as_operand(a) for a in arrays]
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        return concatenate([ravel(a) for a in arrays], axis=0, dtype=dtype)
    if np.ndim(arrays[0]) == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = canonicalize_axis(axis, np.ndim(arrays[0]))
    if dtype is None:
        arrays = util.promote_dtypes(*arrays)
    else:
        arrays = [asarray(a, dtype=dtype) for a in arrays]
    return shp.concatenate(arrays, axis)


def _concatenate_array(arr: Any, axis: int | None, dtype: Any) -> Any:
    """concatenate of the sub-arrays of one array, by one reshape."""
    arr = asarray(arr, dtype=dtype)
    if np.ndim(arr) == 0 or np.shape(arr)[0] == 0:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        return shp.reshape(arr, (np.size(arr),))
    if np.ndim(arr) == 1:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    s = tuple(np.shape(arr))
    axis = canonicalize_axis(axis, len(s) - 1)
    new_shape = s[1:axis + 1] + (s[0] * s[axis + 1],) + s[axis + 2:]
    return shp.reshape(arr, new_shape, [*range(1, axis + 1), 0, *range(axis + 1, len(s))])


@planned
def stack(arrays: Any, axis: int = 0, out: Any = None, dtype: Any = None) -> Any:
    """Join arrays of one shape along a new axis."""
    if not len(arrays):
        raise ValueError("Need at least one array to stack.")
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    if isinstance(arrays, (np.ndarray, Array)):
        axis = canonicalize_axis(axis, np.ndim(arrays))
        return concatenate(expand_dims(arrays, axis + 1), axis=axis, dtype=dtype)
    check_arraylike("stack", *arrays)
    if dtype is not None:
        arrays = [asarray(a, dtype=dtype) for a in arrays]
    else:
        arrays = util.promote_dtypes(*arrays)
    shapes = [tuple(np.shape(a)) for a in arrays]
    if len(set(shapes)) > 1:
        raise ValueError("All input arrays must have the same shape. Got "
                         f"{', '.join(str(s) for s in shapes)}.")
    return shp.stack_p.bind(*arrays, axis=canonicalize_axis(axis, len(shapes[0]) + 1))


def vstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    """Stack along the first axis, treating 1-D arrays as rows."""
    check_arraylike("vstack", *tup)
    return concatenate([atleast_2d(m) for m in tup], axis=0, dtype=dtype)


def hstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    """Stack along the second axis (the first for 1-D arrays)."""
    check_arraylike("hstack", *tup)
    arrs = [atleast_1d(m) for m in tup]
    return concatenate(arrs, axis=0 if np.ndim(arrs[0]) == 1 else 1, dtype=dtype)


def dstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    """Stack along the third axis."""
    check_arraylike("dstack", *tup)
    return concatenate([atleast_3d(m) for m in tup], axis=2, dtype=dtype)


def column_stack(tup: Sequence[Any]) -> Any:
    """Stack 1-D arrays as columns of a 2-D array (2-D arrays are joined as they are)."""
    check_arraylike("column_stack", *tup)
    arrs = [transpose(atleast_2d(a)) if np.ndim(a) < 2 else a for a in map(asarray, tup)]
    return concatenate(arrs, axis=1)


def _atleast(name: str, ndmin: int) -> Any:
    def fn(*arys: Any) -> Any:
        check_arraylike(name, *arys)
        if len(arys) == 1:
            return array(arys[0], copy=False, ndmin=ndmin)
        return [array(a, copy=False, ndmin=ndmin) for a in arys]
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The arguments with at least {ndmin} axes (leading size-1 axes added)."
    return staged_as_jit(fn)


atleast_1d = _atleast("atleast_1d", 1)
atleast_2d = _atleast("atleast_2d", 2)


@staged_as_jit
def atleast_3d(*arys: Any) -> Any:
    """The arguments with at least 3 axes (1-D arrays become (1, n, 1))."""
    check_arraylike("atleast_3d", *arys)
    if len(arys) != 1:
        return [atleast_3d(a) for a in arys]
    arr = asarray(arys[0])
    new_axes = {0: (0, 1, 2), 1: (0, 2), 2: (2,)}.get(np.ndim(arr))
    return arr if new_axes is None else shp.expand_dims(arr, new_axes)


@planned
def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    """x converted to `dtype` (the default float type when None)."""
    x = _ensure("astype", x)
    if isinstance(dtype, dtypes.ExtendedDType) and dtype == x.dtype:
        return lax_extra.array_copy(x) if copy else x  # a key array as its own key dtype
    dtype = dtypes.default_float_dtype() if dtype is None else \
        dtypes.check_user_dtype(dtype, "astype")
    if dtypes.is_complex(np.dtype(x.dtype)) and dtype == dtypes.bool_:
        x = x != util.lax_const(x, 0)
    result = util.convert(x, dtype, False)
    return lax_extra.array_copy(result) if copy else result


# ---------------------------------------------------------------------------------------------
# Reordering: flip, roll, split, tile, repeat, sort
# ---------------------------------------------------------------------------------------------

@staged_as_jit(static_argnames=("axis",))
def _flip(m: Any, axis: Any = None) -> Any:
    if axis is None:
        return shp.rev(m, list(range(np.ndim(m))))
    return shp.rev(m, [canonicalize_axis(ax, np.ndim(m)) for ax in _index_tuple(axis)])


def flip(m: Any, axis: int | Sequence[int] | None = None) -> Any:
    """Reverse the order of elements along `axis` (all axes by default)."""
    return _flip(_ensure("flip", m), None if axis is None else _static_axes(axis))


def _static_axes(axis: Any) -> Any:
    try:
        return operator.index(axis)
    except TypeError:
        return tuple(operator.index(i) for i in axis)


def fliplr(m: Any) -> Any:
    """Reverse the second axis."""
    return _flip(_ensure("fliplr", m), 1)


def flipud(m: Any) -> Any:
    """Reverse the first axis."""
    return _flip(_ensure("flipud", m), 0)


@staged_as_jit(static_argnums=(1, 2))
def _roll_static(a: Any, shift: Sequence[int], axis: Sequence[int]) -> Any:
    for ax, s in zip(*np.broadcast_arrays(axis, shift)):
        size = np.shape(a)[ax]
        if size == 0:
            continue
        i = (-int(s)) % size
        a = shp.concatenate([slicing.slice_in_dim(a, i, size, axis=int(ax)),
                             slicing.slice_in_dim(a, 0, i, axis=int(ax))], int(ax))
    return a


def roll(a: Any, shift: Any, axis: int | Sequence[int] | None = None) -> Any:
    """Shift elements along `axis` cyclically (of the flattened array when None)."""
    arr = _ensure("roll", a)
    if axis is None:
        return roll(ravel(arr), shift, 0).reshape(np.shape(arr))
    axes = tuple(canonicalize_axis(ax, np.ndim(arr)) for ax in _index_tuple(axis))
    try:
        shifts = _index_tuple(shift)
    except TypeError:  # a traced shift
        return _roll_dynamic(arr, asarray(shift), axes)
    return _roll_static(arr, shifts, axes)


@staged_as_jit(static_argnums=(2,))
def _roll_dynamic(a: Any, shift: Any, axis: Sequence[int]) -> Any:
    """roll by traced shifts: a dynamic slice of the array concatenated with itself."""
    b_shape = lax_extra.broadcast_shapes(np.shape(shift), np.shape(axis))
    if len(b_shape) != 1:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    shifts = broadcast_to(shift, b_shape)
    for k, i in enumerate(np.broadcast_to(axis, b_shape)):
        x = slicing.index_in_dim(shifts, k, keepdims=False)
        size = array(a.shape[i], dtype=np.int32)
        x = ufuncs.remainder(lax.convert_element_type(x, np.int32),
                             lax.max(size, np.int32(1)))
        doubled = shp.concatenate((a, a), int(i))
        a = slicing.dynamic_slice_in_dim(doubled, size - x, a.shape[i], axis=int(i))
    return a


def _split(op: str, ary: Any, indices_or_sections: Any, axis: int) -> list:
    ary = _ensure(op, ary)
    axis = operator.index(axis)
    size = np.shape(ary)[axis]
    if isinstance(indices_or_sections, (tuple, list)) or (
            isinstance(indices_or_sections, (np.ndarray, Array))
            and np.ndim(indices_or_sections) > 0):
        split_indices = np.asarray([0] + [operator.index(i) for i in indices_or_sections]
                                   + [size])
        sizes = list(np.diff(split_indices))
    else:
        sections = int(_concrete(indices_or_sections, f"in jax.numpy.{op} argument 1"))
        part, r = builtins.divmod(size, sections)
        if r == 0:
            sizes = [part] * sections
        elif op == "array_split":
            sizes = [part + 1] * r + [part] * (sections - r)
        else:
            raise ValueError(f"array split does not result in an equal division: rest is {r}")
    return list(lax_extra.split(ary, [np.int64(s) for s in sizes], axis=axis))


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Cut into equal sections, or at the given indices, along `axis`."""
    return _split("split", ary, indices_or_sections, axis)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list:
    """Like split, allowing sections of unequal size."""
    return _split("array_split", ary, indices_or_sections, axis)


def tile(A: Any, reps: Any) -> Any:  # noqa: N803
    """Repeat the whole array reps[i] times along axis i."""
    A = _ensure("tile", A)
    try:
        reps_tup = tuple(operator.index(r) for r in reps)
    except TypeError:
        reps_tup = (operator.index(reps),)
    reps_tup = (1,) * (np.ndim(A) - len(reps_tup)) + reps_tup
    if len(reps_tup) > np.ndim(A):
        A = shp.expand_dims(A, tuple(range(len(reps_tup) - np.ndim(A))))
    return lax_extra.tile(A, reps_tup)


def repeat(a: Any, repeats: Any, axis: int | None = None, *,
           total_repeat_length: int | None = None) -> Any:
    """Repeat each element `repeats` times along `axis` (of the flattened array when None);
    per-element repeats must be concrete."""
    check_arraylike("repeat", a)
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonicalize_axis(operator.index(axis), builtins.max(np.ndim(a), 1))
    repeats = np.asarray(_concrete(repeats, "When jit-compiling jnp.repeat, the total number "
                                   "of repeats must be static."))
    if repeats.ndim == 0 and np.ndim(a) != 0:
        in_shape = list(np.shape(a))
        aux_shape = in_shape[:axis + 1] + [int(repeats)] + in_shape[axis + 1:]
        a = shp.broadcast_in_dim(a, aux_shape, [i for i in range(len(aux_shape))
                                                if i != axis + 1])
        in_shape[axis] *= int(repeats)
        return a.reshape(in_shape)
    repeats = np.ravel(repeats)
    if np.ndim(a) == 0:
        if repeats.shape != (1,):
            raise ValueError("`repeat` with a scalar parameter `a` is only implemented for "
                             "scalar values of the parameter `repeats`.")
        return full([int(repeats[0]) if total_repeat_length is None else total_repeat_length],
                    a)
    repeats = np.broadcast_to(repeats, [np.shape(a)[axis]])
    pieces = [shp.broadcast_in_dim(slicing.slice_in_dim(a, i, i + 1, axis=axis),
                                   _with(np.shape(a), axis, int(r)), range(np.ndim(a)))
              for i, r in enumerate(repeats) if r]
    if not pieces:
        return zeros(_with(np.shape(a), axis, 0), np.dtype(a.dtype))
    return shp.concatenate(pieces, axis)


def _with(shape: Sequence[int], axis: int, size: int) -> tuple[int, ...]:
    out = list(shape)
    out[axis] = size
    return tuple(out)


def _sort_operand(name: str, a: Any, axis: int | None, kind: Any, order: Any
                  ) -> tuple[Any, int]:
    """The array to sort (flattened when axis is None) and the axis; rejects NumPy-only args."""
    arr = _ensure(name, a)
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")
    if axis is None:
        arr, axis = ravel(arr), 0
    return arr, canonicalize_axis(axis, np.ndim(arr))


@staged_as_jit(static_argnames=("axis", "kind", "order", "stable", "descending"))
def sort(a: Any, axis: int | None = -1, *, kind: None = None, order: None = None,
         stable: bool = True, descending: bool = False) -> Any:
    """Sorted copy along `axis` (of the flattened array when None)."""
    arr, dimension = _sort_operand("sort", a, axis, kind, order)
    result = lax_extra.sort(arr, dimension=dimension, is_stable=stable)
    return shp.rev(result, [dimension]) if descending else result


@staged_as_jit(static_argnames=("axis", "kind", "order", "stable", "descending", "dtype"))
def argsort(a: Any, axis: int | None = -1, *, kind: None = None, order: None = None,
            stable: bool = True, descending: bool = False, dtype: Any = None) -> Any:
    """Indices that sort `a` along `axis`."""
    arr, dimension = _sort_operand("argsort", a, axis, kind, order)
    if dtype is not None:
        index_dtype = dtypes.check_user_dtype(dtype)
    elif np.shape(arr)[dimension] < 2**31:
        index_dtype = dtypes.default_int_dtype()
    else:
        index_dtype = dtypes.int64
    iota = shp.broadcasted_iota(index_dtype, np.shape(arr), dimension)
    if descending and stable:
        arr = shp.rev(arr, [dimension])
        iota = shp.rev(iota, [dimension])
    _, indices = lax_extra.sort_key_val(arr, iota, dimension=dimension, is_stable=stable)
    return shp.rev(indices, [dimension]) if descending else indices


# ---------------------------------------------------------------------------------------------
# Products
# ---------------------------------------------------------------------------------------------

def _output_type(a: Any, b: Any, preferred_element_type: Any) -> tuple[np.dtype, bool]:
    """(accumulation dtype, weak) of a product: promoted, or the requested type."""
    if preferred_element_type is None:
        return dtypes.promote([util.type_of(a), util.type_of(b)])
    return dtypes.check_user_dtype(preferred_element_type), False


@fast_product
@with_out_sharding("dot")  # (issue 15: docs/notebooks/shard_map.md passes out_sharding=)
@planned
def dot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """NumPy's dot: contract a's last axis with b's second-to-last (or only) axis."""
    check_arraylike("dot", a, b)
    a, b = util.as_operand(a), util.as_operand(b)
    out_dtype, out_weak = _output_type(a, b, preferred_element_type)
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        contract: tuple = ((), ())
    else:
        contract = ((na - 1,), (0 if nb == 1 else nb - 2,))
    result = dot_prims.dot_general(a, b, (contract, ((), ())), precision, out_dtype)
    return util.convert(result, out_dtype, out_weak)


@fast_product
@planned
def matmul(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Matrix product with NumPy's broadcasting of leading (batch) axes."""
    check_arraylike("matmul", a, b)
    a, b = util.as_operand(a), util.as_operand(b)
    for i, x in enumerate((a, b)):
        if np.ndim(x) < 1:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has "
                             f"ndim {np.ndim(x)}")
    out_dtype, out_weak = _output_type(a, b, preferred_element_type)
    na, nb = a.ndim, b.ndim
    if na <= 2 and nb <= 2:  # no batch axes: what the general case below reduces to
        result = dot_prims.dot_general(a, b, (((na - 1,), (nb - 1 - (nb > 1),)), ((), ())),
                                       precision, out_dtype)
        return util.convert(result, out_dtype, out_weak)
    a_is_mat, b_is_mat = na > 1, nb > 1
    a_batch = tuple(np.shape(a)[:-2]) if a_is_mat else ()
    b_batch = tuple(np.shape(b)[:-2]) if b_is_mat else ()
    nbatch = builtins.max(len(a_batch), len(b_batch))
    a_batch = (None,) * (nbatch - len(a_batch)) + a_batch
    b_batch = (None,) * (nbatch - len(b_batch)) + b_batch
    a_squeeze: list[int] = []
    b_squeeze: list[int] = []
    both_squeeze: list[int] = []
    a_batch_pos: list[int] = []
    b_batch_pos: list[int] = []
    idx_batch: list[int] = []
    idx_a_other: list[int] = []
    idx_b_other: list[int] = []
    for i, (da, db) in enumerate(zip(a_batch, b_batch)):
        if da is None:
            idx_b_other.append(i)
        elif db is None:
            idx_a_other.append(i)
        elif da == 1 and db == 1:
            a_squeeze.append(len(idx_batch) + len(idx_a_other) + len(a_squeeze))
            b_squeeze.append(len(idx_batch) + len(idx_b_other) + len(b_squeeze))
            both_squeeze.append(i)
        elif da == 1:
            idx_b_other.append(i)
            a_squeeze.append(len(idx_batch) + len(idx_a_other) + len(a_squeeze))
        elif db == 1:
            idx_a_other.append(i)
            b_squeeze.append(len(idx_batch) + len(idx_b_other) + len(b_squeeze))
        elif da == db:
            a_batch_pos.append(len(idx_batch) + len(idx_a_other))
            b_batch_pos.append(len(idx_batch) + len(idx_b_other))
            idx_batch.append(i)
        else:
            raise ValueError(f"Incompatible types for matmul arguments: {a.aval.str_short()} "
                             f"and {b.aval.str_short()}")
    if a_is_mat:
        idx_a_other.append(nbatch)
    if b_is_mat:
        idx_b_other.append(nbatch + a_is_mat)
    order = idx_batch + idx_a_other + idx_b_other
    perm = sorted(range(len(order)), key=order.__getitem__)
    a = shp.squeeze(a, tuple(a_squeeze))
    b = shp.squeeze(b, tuple(b_squeeze))
    out = dot_prims.dot_general(
        a, b, (((np.ndim(a) - 1,), (np.ndim(b) - 1 - b_is_mat,)), (a_batch_pos, b_batch_pos)),
        precision, out_dtype)
    result = shp.transpose(out, perm)
    if both_squeeze:
        result = shp.expand_dims(result, tuple(both_squeeze))
    return util.convert(result, out_dtype, out_weak)


@planned
def vdot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Dot product of the flattened arrays, conjugating a."""
    check_arraylike("vdot", a, b)
    a, b = util.as_operand(a), util.as_operand(b)
    if dtypes.is_complex(np.dtype(a.dtype)):
        a = ufuncs.conj(a)
    return dot(ravel(a), ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)


@planned
def tensordot(a: Any, b: Any, axes: Any = 2, *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """Contract the last `axes` axes of a with the first of b (or the given axis lists)."""
    check_arraylike("tensordot", a, b)
    a, b = util.as_operand(a), util.as_operand(b)
    na, nb = np.ndim(a), np.ndim(b)
    out_dtype, out_weak = _output_type(a, b, preferred_element_type)
    if type(axes) is int:
        if axes > builtins.min(na, nb):
            raise TypeError(f"Number of tensordot axes (axes {axes}) exceeds input ranks "
                            f"({np.shape(a)} and {np.shape(b)})")
        contract = (tuple(range(na - axes, na)), tuple(range(axes)))
    elif isinstance(axes, (tuple, list)) and len(axes) == 2:
        ax1, ax2 = axes
        if isinstance(ax1, int) and isinstance(ax2, int):
            contract = ((canonicalize_axis(ax1, na),), (canonicalize_axis(ax2, nb),))
        elif isinstance(ax1, (tuple, list)) and isinstance(ax2, (tuple, list)):
            if len(ax1) != len(ax2):
                raise TypeError("tensordot requires axes lists to have equal length, got "
                                f"{ax1} and {ax2}.")
            contract = (tuple(canonicalize_axis(i, na) for i in ax1),
                        tuple(canonicalize_axis(i, nb) for i in ax2))
        else:
            raise TypeError("tensordot requires both axes lists to be either ints, tuples or "
                            f"lists, got {ax1} and {ax2}")
    else:
        raise TypeError("tensordot axes argument must be an int, a pair of ints, or a pair of "
                        "lists/tuples of ints.")
    result = dot_prims.dot_general(a, b, (contract, ((), ())), precision, out_dtype)
    return util.convert(result, out_dtype, out_weak)


@planned
def inner(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Contract the last axes of a and b."""
    check_arraylike("inner", a, b)
    a, b = util.as_operand(a), util.as_operand(b)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        if preferred_element_type is not None:
            a, b = astype(a, preferred_element_type), astype(b, preferred_element_type)
        return a * b
    return tensordot(a, b, (-1, -1), precision=precision,
                     preferred_element_type=preferred_element_type)


@planned
def outer(a: Any, b: Any, out: Any = None) -> Any:
    """a[:, None] * b[None, :] of the flattened arrays."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    check_arraylike("outer", a, b)
    a, b = util.promote_dtypes(a, b)
    return shp.expand_dims(ravel(a), (1,)) * shp.expand_dims(ravel(b), (0,))


def _removechars(s: str, chars: str) -> str:
    return s.translate(str.maketrans(dict.fromkeys(chars)))


@functools.cache
def unoptimized_path() -> Any:
    """opt_einsum's path optimizer contracting the operands left to right, as given (what
    optimize=False means).  opt_einsum loads on first use (import time)."""
    import opt_einsum  # noqa: PLC0415

    class Unoptimized(opt_einsum.paths.PathOptimizer):
        def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> list:
            return [(0, 1)] * (len(inputs) - 1)

    return Unoptimized()


@fast_product
@planned
def einsum(subscripts: Any, /, *operands: Any, out: Any = None, optimize: Any = "auto",
           precision: Any = None, preferred_element_type: Any = None,
           _dot_general: Callable[..., Any] = dot_prims.dot_general) -> Any:
    """Einstein summation, contracted pairwise along opt_einsum's path with dot_general
    (`_dot_general`, experimental as in JAX, replaces it: called as
    `_dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type=...)`)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    operands = (subscripts, *operands)
    path_type = "optimal" if optimize is True else unoptimized_path() if optimize is False \
        else optimize
    operands = tuple(op.__jax_array__() if hasattr(op, "__jax_array__") else op
                     for op in operands)
    key = None
    if type(subscripts) is str and builtins.all(
            isinstance(op, (Array, Tracer, np.ndarray)) for op in operands[1:]):
        # the path depends on the subscripts and the shapes alone; arrays pass through it
        key = (subscripts, path_type, *(op.shape for op in operands[1:]))
        try:
            contractions = _EINSUM_PATHS.get(key)
        except TypeError:  # an explicit path (a list)
            key = contractions = None
        if contractions is not None:
            return _einsum([util.as_operand(op) for op in operands[1:]], contractions,
                           precision, preferred_element_type, _dot_general)
    import opt_einsum  # noqa: PLC0415 - loads on first use (import time)
    operands, contractions = opt_einsum.contract_path(
        *operands, einsum_call=True, use_blas=True, optimize=path_type)
    contractions = tuple((c[0], frozenset(c[1]), c[2]) for c in contractions)
    check_arraylike("einsum", *operands)
    if key is not None:
        if len(_EINSUM_PATHS) >= 1024:
            _EINSUM_PATHS.clear()
        _EINSUM_PATHS[key] = contractions
    return _einsum([util.as_operand(op) for op in operands], contractions, precision,
                   preferred_element_type, _dot_general)


#: (subscripts, path type, operand shapes) -> opt_einsum's contractions, for string subscripts
_EINSUM_PATHS: dict = {}
caches.register(_EINSUM_PATHS.clear)


def _einsum_sum(x: Any, axes: Sequence[int], preferred: np.dtype) -> Any:
    if dtypes.result_type(x, preferred) != np.dtype(x.dtype):
        x = astype(x, preferred)
    reduce = red.reduce_or if np.dtype(x.dtype) == dtypes.bool_ else red.reduce_sum
    return reduce(x, tuple(axes))


def _sum_uniques(operand: Any, names: str, uniques: list, preferred: np.dtype
                 ) -> tuple[Any, str]:
    if uniques:
        operand = _einsum_sum(operand, [names.index(n) for n in uniques], preferred)
        names = _removechars(names, "".join(uniques))
    return operand, names


def _delta(shape: tuple, axes: list[int]) -> Any:
    """A boolean array of `shape` that is true where the indices along `axes` agree."""
    base = tuple(shape[a] for a in axes)
    iotas = [shp.broadcasted_iota(dtypes.uint32, base, i) for i in range(len(base))]
    eyes = [lax.eq(i1, i2) for i1, i2 in zip(iotas[:-1], iotas[1:])]
    eye = eyes[0]
    for other in eyes[1:]:
        eye = lax.bitwise_and(eye, other)
    return shp.broadcast_in_dim(eye, shape, axes)


def _sum_repeats(operand: Any, names: str, counts: collections.Counter, keep_names: str,
                 preferred: np.dtype) -> tuple[Any, str]:
    for name, count in counts.items():
        if count > 1:
            axes = [i for i, n in enumerate(names) if n == name]
            eye = _delta(tuple(np.shape(operand)), axes)
            operand = lax.select(eye, operand, lax_extra.full_like(operand, 0))
            if name not in keep_names:
                operand = _einsum_sum(operand, axes, preferred)
                names = names.replace(name, "")
            else:
                operand = _einsum_sum(operand, axes[:-1], preferred)
                names = names.replace(name, "", count - 1)
    return operand, names


def _filter_singleton_dims(operand: Any, names: str, other_shape: tuple, other_names: str
                           ) -> tuple[Any, str]:
    keep = [np.shape(operand)[i] != 1 or j == -1 or other_shape[j] == 1
            for i, j in enumerate(map(other_names.find, names))]
    squeezed = [i for i, k in enumerate(keep) if not k]
    return shp.squeeze(operand, squeezed), "".join(n for n, k in zip(names, keep) if k)


def _einsum(operands: list, contractions: tuple, precision: Any,
            preferred_element_type: Any, dot_general: Callable[..., Any]) -> Any:
    if preferred_element_type is None:
        preferred, out_weak = dtypes.result_type(*operands, return_weak_type_flag=True)
    else:
        preferred, out_weak = dtypes.check_user_dtype(preferred_element_type), False
    for operand_indices, contracted_set, einstr in contractions:
        contracted = sorted(contracted_set)
        input_str, result_names = einstr.split("->")
        input_names = input_str.split(",")
        if len(operand_indices) == 1:
            operand = operands.pop(operand_indices[0])
            (names,) = input_names
            counts = collections.Counter(names)
            operand, names = _sum_uniques(operand, names,
                                          [n for n in contracted if counts[n] == 1], preferred)
            operand, names = _sum_repeats(operand, names, counts, result_names, preferred)
        elif len(operand_indices) == 2:
            lhs, rhs = map(operands.pop, operand_indices)
            lhs_names, rhs_names = input_names
            lhs, lhs_names = _filter_singleton_dims(lhs, lhs_names, np.shape(rhs), rhs_names)
            rhs, rhs_names = _filter_singleton_dims(rhs, rhs_names, np.shape(lhs), lhs_names)
            lhs_counts = collections.Counter(lhs_names)
            rhs_counts = collections.Counter(rhs_names)
            lhs, lhs_names = _sum_uniques(
                lhs, lhs_names, [n for n in contracted if lhs_counts[n] == 1
                                 and rhs_counts[n] == 0], preferred)
            rhs, rhs_names = _sum_uniques(
                rhs, rhs_names, [n for n in contracted if rhs_counts[n] == 1
                                 and lhs_counts[n] == 0], preferred)
            lhs, lhs_names = _sum_repeats(lhs, lhs_names, lhs_counts, result_names + rhs_names,
                                          preferred)
            rhs, rhs_names = _sum_repeats(rhs, rhs_names, rhs_counts, result_names + lhs_names,
                                          preferred)
            either = set(lhs_names) | set(rhs_names)
            contracted = [n for n in contracted if n in either]
            both = set(lhs_names) & set(rhs_names)
            batch_names = "".join(n for n in result_names if n in both)
            lhs_batch = tuple(lhs_names.find(n) for n in batch_names)
            rhs_batch = tuple(rhs_names.find(n) for n in batch_names)
            lhs_cont = tuple(lhs_names.index(n) for n in contracted)
            rhs_cont = tuple(rhs_names.index(n) for n in contracted)
            deleted = batch_names + "".join(contracted)
            rest_lhs = _removechars(lhs_names, deleted)
            rest_rhs = _removechars(rhs_names, deleted)
            names = batch_names + rest_rhs + rest_lhs
            if names == result_names:
                operand = dot_general(rhs, lhs, ((rhs_cont, lhs_cont), (rhs_batch, lhs_batch)),
                                      precision, preferred_element_type=preferred)
            else:
                names = batch_names + rest_lhs + rest_rhs
                operand = dot_general(lhs, rhs, ((lhs_cont, rhs_cont), (lhs_batch, rhs_batch)),
                                      precision, preferred_element_type=preferred)
        else:
            raise NotImplementedError(
                "jax.numpy.einsum does not support simultaneous contraction of 3 or more "
                "operands. Typically this means you've passed an unsupported path to the "
                "einsum optimize parameter.")
        if names != result_names:
            operand = shp.transpose(operand, tuple(names.index(n) for n in result_names))
        operands.append(operand)
    return util.convert(operands[0], preferred, out_weak)


# ---------------------------------------------------------------------------------------------
# Indices of non-zero elements (concrete arrays, or a static `size`)
# ---------------------------------------------------------------------------------------------

def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    """Indices of the non-zero elements, as JAX computes them (a bincount of the running count
    of non-zeros), so a static `size` (padded with `fill_value`, default 0) works under jit."""
    from pyjax._src.numpy import reductions
    arr = _ensure("nonzero", a)
    if np.ndim(arr) == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    mask = arr if np.dtype(arr.dtype) == dtypes.bool_ else ufuncs.not_equal(arr, 0)
    count = _concrete(reductions.sum(mask) if size is None else size,
                      "The size argument of jnp.nonzero must be statically specified to use "
                      "jnp.nonzero within JAX transformations.")
    count = operator.index(count)
    shape = np.shape(arr)
    if math.prod(shape) == 0 or count == 0:
        return tuple(zeros(count, int) for _ in shape)
    running = reductions.cumsum(mask)
    bins = zeros(count, dtypes.default_int_dtype()).at[ufuncs.clip(running, 0)].add(
        np.array(1, dtypes.default_int_dtype()), mode="drop")
    flat_indices = reductions.cumsum(bins)
    strides = (np.cumprod(shape[::-1])[::-1] // shape).astype(np.dtype(flat_indices.dtype))
    out = tuple((flat_indices // stride) % dim for stride, dim in zip(strides, shape))
    if fill_value is not None:
        fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * len(shape)
        if builtins.any(np.shape(f) != () for f in fills):
            raise ValueError("fill_value must be a scalar or a tuple of length "
                             f"{len(shape)}; got {fill_value}")
        fill_mask = arange(count) >= reductions.sum(mask)
        out = tuple(ufuncs.where(fill_mask, f, entry) for f, entry in zip(fills, out))
    return out


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Indices of the non-zero elements of the flattened array."""
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


@staged_as_jit(static_argnames=("offset", "axis1", "axis2"))
def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The `offset` diagonal of the 2-D slices spanned by axis1 and axis2 (moved last).  As in
    JAX, a jit whose square, 2-D, non-bool main diagonal is a platform_dependent choice
    between the gather and a masked sum (JAX's mosaic branch)."""
    a = _ensure("diagonal", a)
    if np.ndim(a) < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    offset = operator.index(offset)
    shape = np.shape(a)

    def gather_diagonal(a: Any) -> Any:
        nd = np.ndim(a)
        a = moveaxis(a, (canonicalize_axis(axis1, nd), canonicalize_axis(axis2, nd)), (-2, -1))
        n = max(0, min(shape[axis1] + min(offset, 0), shape[axis2] - max(offset, 0)))
        i = arange(n)
        j = arange(abs(offset), abs(offset) + n)
        return a[..., i, j] if offset >= 0 else a[..., j, i]

    if shape[0] != shape[1] or np.ndim(a) != 2 or offset != 0 or a.dtype == bool:
        return gather_diagonal(a)
    mask = eye(shape[0], dtype=a.dtype)

    def masked_sum(a: Any) -> Any:
        return red.reduce_sum(lax.mul(mask, a), (0,))

    from pyjax._src.primitives.control_flow import platform_dependent
    return platform_dependent(a, default=gather_diagonal, mosaic=masked_sum)


def diag(v: Any, k: int = 0) -> Any:
    """The k-th diagonal of a 2-D array, or a 2-D array with 1-D v on its k-th diagonal."""
    return _diag(_ensure("diag", v), operator.index(k))


@staged_as_jit(static_argnames=("k",))
def _diag(v: Any, k: int) -> Any:
    """diag as JAX stages it: 1-D v padded, then selected by an eye(bool) mask."""
    if np.ndim(v) == 2:
        return diagonal(v, offset=k)
    if np.ndim(v) != 1:
        raise ValueError("diag input must be 1d or 2d")
    n = np.shape(v)[0] + abs(k)
    zero = lax_extra.full_like(v, 0, shape=())
    v = shp.pad(v, zero, ((max(0, -k), max(0, k), 0),))
    return ufuncs.where(eye(n, k=k, dtype=bool), v[:, None], lax_extra.full_like(v, 0, shape=()))
