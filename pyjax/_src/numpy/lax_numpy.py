"""jnp array creation, shape manipulation and products (dot, matmul), over lax primitives."""
from __future__ import annotations

import builtins
import math
from typing import Any, Sequence

import numpy as np

from pyjax._src import errors
from pyjax._src.backend.dispatch import to_buffer
from pyjax._src.core import dtypes
from pyjax._src.core.array import Array, ArrayImpl
from pyjax._src.core.trace import Tracer
from pyjax._src.numpy import util
from pyjax._src.numpy.util import staged_as_jit
from pyjax._src.primitives import dot as dot_prims
from pyjax._src.primitives import elementwise as lax
from pyjax._src.primitives import shape as shp

pi, e, inf, nan, euler_gamma = np.pi, np.e, np.inf, np.nan, np.euler_gamma
newaxis = None


# ---------------------------------------------------------------------------------------------
# array / asarray
# ---------------------------------------------------------------------------------------------

def _leaves(obj: Any) -> list:
    if isinstance(obj, (list, tuple)):
        out = []
        for item in obj:
            out.extend(_leaves(item))
        return out
    return [obj]


def _check_python_ints(leaves: list, dtype: np.dtype) -> None:
    if not dtypes.is_integer(dtype):
        return
    info = np.iinfo(dtype) if dtype.itemsize >= 1 and dtype.kind in "iu" else None
    if info is None:
        return
    for leaf in leaves:
        if type(leaf) is int and not info.min <= leaf <= info.max:
            raise OverflowError(f"Python integer {leaf} out of bounds for {dtype.name}")


def array(object: Any, dtype: Any = None, copy: bool = True, order: str | None = "K",  # noqa: A002
          ndmin: int = 0) -> Any:
    """Create an Array: from Python scalars (weak), nested lists, NumPy arrays or Arrays."""
    want = None if dtype is None else dtypes.check_user_dtype(dtype)
    if hasattr(object, "__jax_array__"):
        object = object.__jax_array__()
    if isinstance(object, Array):
        out = object if want is None else util.convert(object, want, False)
    elif type(object) in dtypes.python_scalar_dtypes:
        if want is None:
            buf, weak = to_buffer(object)
            out = ArrayImpl(buf, weak)
        else:
            if type(object) is int:
                _check_python_ints([object], want)
            out = ArrayImpl(np.asarray(object, want), False)
    elif isinstance(object, (list, tuple)):
        leaves = _leaves(object)
        if builtins.any(isinstance(x, Array) for x in leaves):
            out = _stack_nested(object, want)
        else:
            out = _array_from_nested(object, leaves, want)
    elif isinstance(object, (np.ndarray, np.generic)):
        target = dtypes.canonicalize_dtype(object.dtype) if want is None else want
        if target not in dtypes.supported_dtypes:
            raise TypeError(f"JAX only supports number and bool dtypes, got dtype "
                            f"{object.dtype} in array")
        out = ArrayImpl(np.array(object, target), False)
    elif object is None:
        raise TypeError("None is not a valid value for jnp.array")
    else:
        try:
            buf = np.asarray(object)
        except Exception as err:
            raise TypeError(f"Unexpected input type for array: {type(object)}") from err
        if buf.dtype == object_dtype:
            raise TypeError(f"Unexpected input type for array: {type(object)}")
        return array(buf, want, ndmin=ndmin)
    if ndmin > np.ndim(out):
        out = shp.reshape(out, (1,) * (ndmin - np.ndim(out)) + tuple(np.shape(out)))
    return out


object_dtype = np.dtype(object)


def _array_from_nested(obj: Any, leaves: list, want: np.dtype | None) -> ArrayImpl:
    if want is None:
        types = [dtypes.dtype_and_weak(x) for x in leaves] or [(dtypes.default_float_dtype(),
                                                                 False)]
        want, _ = dtypes.promote([(d, False) for d, _ in types])
        for leaf in leaves:  # NumPy arrays inside lists keep their (canonical) dtype
            if isinstance(leaf, (np.ndarray, np.generic)):
                want = dtypes.promote([(want, False),
                                       (dtypes.canonicalize_dtype(leaf.dtype), False)])[0]
    _check_python_ints(leaves, want)
    with np.errstate(over="ignore"):
        buf = np.array(obj, dtype=want)
    if buf.dtype == object_dtype:
        raise TypeError("Arrays from nested sequences must be rectangular")
    return ArrayImpl(buf, False)


def _stack_nested(obj: Any, want: np.dtype | None) -> Any:
    if isinstance(obj, (list, tuple)):
        parts = [_stack_nested(x, want) for x in obj]
        if not parts:
            return ArrayImpl(np.zeros((0,), want or dtypes.default_float_dtype()), False)
        parts = util.promote_dtypes(*parts)
        dtype, _ = dtypes.promote([util.type_of(p) for p in parts])
        parts = [util.convert(p, dtype, False) for p in parts]
        return stack(parts)
    out = util.as_operand(obj)
    return out if want is None else util.convert(out, want, False)


def asarray(a: Any, dtype: Any = None, order: str | None = None, *, copy: bool | None = None
            ) -> Any:
    """Like `array`, without copying Arrays that already have the requested dtype."""
    if type(a) is ArrayImpl and (dtype is None or np.dtype(a.dtype) ==
                                  dtypes.check_user_dtype(dtype)):
        return a
    return array(a, dtype=dtype, copy=bool(copy))


def _require_concrete(x: Any, what: str) -> Any:
    if isinstance(x, Tracer):
        value = x.concrete_value()
        if value is None:
            raise errors.ConcretizationTypeError(
                x, f"The {what} argument of jnp functions must be static (concrete).")
        return value
    return x


# ---------------------------------------------------------------------------------------------
# Creation
# ---------------------------------------------------------------------------------------------

def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) or (isinstance(shape, Array) and np.ndim(shape) == 0):
        shape = (shape,)
    out = tuple(int(_require_concrete(s, "shape")) for s in shape)
    if builtins.any(s < 0 for s in out):
        raise ValueError(f"negative dimensions are not allowed, got shape {out}")
    return out


def full(shape: Any, fill_value: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """An array of `shape` filled with `fill_value` (weak when the fill is a Python scalar)."""
    shape = _shape(shape)
    util.check_arraylike("full", fill_value)
    if dtype is None:
        fill = util.as_operand(fill_value)
    else:
        fill = util.convert(util.as_operand(fill_value), dtypes.check_user_dtype(dtype), False)
    return util.broadcast_to(fill, shape)


def _scalar(value: Any, dtype: Any) -> ArrayImpl:
    dt = dtypes.default_float_dtype() if dtype is None else dtypes.check_user_dtype(dtype)
    return ArrayImpl(np.asarray(value, dt), False)


def zeros(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """An array of zeros (float32 by default)."""
    return shp.broadcast_in_dim(_scalar(0, dtype), _shape(shape), ())


def ones(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    """An array of ones (float32 by default)."""
    return shp.broadcast_in_dim(_scalar(1, dtype), _shape(shape), ())


def empty(shape: Any, dtype: Any = None, *, device: Any = None) -> Any:
    return zeros(shape, dtype)


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None, *,
              device: Any = None) -> Any:
    """An array shaped like `a` (or `shape`) filled with `fill_value`, of a's dtype by default."""
    util.check_arraylike("full_like", a, fill_value)
    dt, weak = util.type_of(a)
    if dtype is not None:
        dt, weak = dtypes.check_user_dtype(dtype), False
    fill = util.convert(util.as_operand(fill_value), dt, weak)
    return util.broadcast_to(fill, np.shape(a) if shape is None else _shape(shape))


def zeros_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    return full_like(a, 0, dtype, shape)


def ones_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    return full_like(a, 1, dtype, shape)


def empty_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None) -> Any:
    return full_like(a, 0, dtype, shape)


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None, *,
           device: Any = None) -> Any:
    """Evenly spaced values in [start, stop); `arange(n)` is an iota, like JAX."""
    start = _require_concrete(start, "start")
    stop = _require_concrete(stop, "stop") if stop is not None else None
    step = _require_concrete(step, "step") if step is not None else None
    if dtype is None:
        parts = [x for x in (start, stop, step) if x is not None]
        dt = dtypes.promote([(dtypes.dtype_and_weak(np.asarray(p) if isinstance(p, Array)
                                                    else p)[0], False) for p in parts])[0]
    else:
        dt = dtypes.check_user_dtype(dtype)
    if stop is None and step is None and dtypes.is_integer(dt) or (
            stop is None and step is None and float(start) == int(start) and
            dtypes.is_integer(dt)):
        return shp.iota(dt, int(np.ceil(start)))
    if stop is None and step is None:
        start, stop = 0, start
    values = np.arange(_py(start), _py(stop), 1 if step is None else _py(step))
    return ArrayImpl(values.astype(dt), False)


def _py(x: Any) -> Any:
    return np.asarray(x).item()


@staged_as_jit(static_argnames=("num", "endpoint", "retstep", "dtype", "axis"))
def _linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
              retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    dt = dtypes.to_inexact_dtype(dtypes.result_type(start, stop)) if dtype is None else \
        dtypes.check_user_dtype(dtype)
    computation = dtypes.to_inexact_dtype(dt)
    start = util.convert(util.as_operand(start), computation, False)
    stop = util.convert(util.as_operand(stop), computation, False)
    bounds_shape = np.broadcast_shapes(np.shape(start), np.shape(stop))
    start = util.broadcast_to(start, bounds_shape)
    stop = util.broadcast_to(stop, bounds_shape)
    div = (num - 1) if endpoint else num
    delta = lax.sub(stop, start)
    if num > 1:
        step = lax.div(delta, ArrayImpl(np.asarray(div, computation), True))
        frac_shape = (num - 1 if endpoint else num,) + (1,) * len(bounds_shape)
        iota = shp.broadcasted_iota(computation, frac_shape, 0)
        frac = lax.div(iota, ArrayImpl(np.asarray(div, computation), True))
        start_b = shp.reshape(start, (1,) + tuple(bounds_shape))
        stop_b = shp.reshape(stop, (1,) + tuple(bounds_shape))
        one = ArrayImpl(np.asarray(1, computation), True)
        out = lax.add(lax.mul(start_b, lax.sub(one, frac)), lax.mul(stop_b, frac))
        if endpoint:
            out = shp.concatenate([out, shp.broadcast_in_dim(
                stop, (1,) + tuple(bounds_shape), tuple(range(1, 1 + len(bounds_shape))))], 0)
    elif num == 1:
        step = delta
        out = shp.broadcast_in_dim(start, (1,) + tuple(bounds_shape),
                                   tuple(range(1, 1 + len(bounds_shape))))
    else:
        step = delta
        out = shp.broadcast_in_dim(start, (0,) + tuple(bounds_shape),
                                   tuple(range(1, 1 + len(bounds_shape))))
    if axis != 0:
        out = moveaxis(out, 0, axis)
    out = util.convert(out, dt, False)
    return (out, step) if retstep else out


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0, *, device: Any = None
             ) -> Any:
    """`num` evenly spaced samples from start to stop."""
    num = int(_require_concrete(num, "num"))
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    util.check_arraylike("linspace", start, stop)
    return _linspace(start, stop, num=num, endpoint=bool(endpoint), retstep=bool(retstep),
                     dtype=None if dtype is None else dtypes.check_user_dtype(dtype),
                     axis=int(axis))


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None, *,  # noqa: N803
        device: Any = None) -> Any:
    """A 2-D array with ones on the k-th diagonal."""
    n = int(_require_concrete(N, "N"))
    m = n if M is None else int(_require_concrete(M, "M"))
    if n < 0 or m < 0:
        raise ValueError(f"negative dimensions are not allowed, got {n} and {m}")
    dt = dtypes.default_float_dtype() if dtype is None else dtypes.check_user_dtype(dtype)
    rows = shp.broadcasted_iota(dtypes.int32, (n, m), 0)
    cols = shp.broadcasted_iota(dtypes.int32, (n, m), 1)
    offset = lax.add(rows, ArrayImpl(np.asarray(int(k), dtypes.int32), True))
    return util.convert(lax.eq(offset, cols), dt, False)


def identity(n: int, dtype: Any = None) -> Any:
    return eye(n, dtype=dtype)


# ---------------------------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------------------------

def shape(a: Any) -> tuple[int, ...]:
    return tuple(np.shape(a))


def ndim(a: Any) -> int:
    return len(np.shape(a))


def size(a: Any, axis: int | None = None) -> int:
    s = np.shape(a)
    return int(math.prod(s)) if axis is None else s[axis]


def _infer_shape(new: Sequence[int], total: int, old: tuple) -> tuple[int, ...]:
    new = tuple(int(_require_concrete(s, "shape")) for s in new)
    unknown = [i for i, s in enumerate(new) if s == -1]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if unknown:
        known = math.prod(s for s in new if s != -1)
        if known == 0 or total % known:
            raise TypeError(f"cannot reshape array of shape {old} (size {total}) into shape "
                            f"{new}")
        new = tuple(total // known if s == -1 else s for s in new)
    if math.prod(new) != total:
        raise TypeError(f"cannot reshape array of shape {old} (size {total}) into shape {new}")
    return new


def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None,
            copy: Any = None) -> Any:
    """Change the shape; one dimension may be -1."""
    util.check_arraylike("reshape", a)
    a = util.as_operand(a)
    if shape is None:
        shape = newshape
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    old = tuple(np.shape(a))
    new = _infer_shape(shape, math.prod(old), old)
    if order == "F":
        return transpose(shp.reshape(transpose(a), new[::-1]))
    return shp.reshape(a, new)


def ravel(a: Any, order: str = "C") -> Any:
    return reshape(a, (-1,), order)


def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    """Permute axes (reverse them by default)."""
    util.check_arraylike("transpose", a)
    a = util.as_operand(a)
    nd = np.ndim(a)
    perm = tuple(range(nd))[::-1] if axes is None else tuple(
        util.canonicalize_axis(i, nd) for i in axes)
    if sorted(perm) != list(range(nd)):
        raise ValueError(f"axes {axes} don't match array of dimension {nd}")
    return shp.transpose(a, perm)


permute_dims = transpose


def matrix_transpose(x: Any, /) -> Any:
    nd = np.ndim(x)
    if nd < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={nd}")
    return transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    nd = np.ndim(a)
    perm = list(range(nd))
    i, j = util.canonicalize_axis(axis1, nd), util.canonicalize_axis(axis2, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return shp.transpose(util.as_operand(a), perm)


def moveaxis(a: Any, source: int | Sequence[int], destination: int | Sequence[int]) -> Any:
    nd = np.ndim(a)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [util.canonicalize_axis(s, nd) for s in src]
    dst = [util.canonicalize_axis(d, nd) for d in dst]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return shp.transpose(util.as_operand(a), order)


def squeeze(a: Any, axis: int | Sequence[int] | None = None) -> Any:
    """Remove size-1 axes (all of them, or those named by `axis`)."""
    util.check_arraylike("squeeze", a)
    a = util.as_operand(a)
    s = np.shape(a)
    if axis is None:
        dims = tuple(i for i, d in enumerate(s) if d == 1)
    else:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        dims = tuple(util.canonicalize_axis(i, len(s)) for i in axes)
        for d in dims:
            if s[d] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not "
                                 f"equal to one, got shape={s} and dimensions={dims}")
    return shp.squeeze(a, dims)


def expand_dims(a: Any, axis: int | Sequence[int]) -> Any:
    """Insert size-1 axes at `axis`."""
    util.check_arraylike("expand_dims", a)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out_nd = np.ndim(a) + len(axes)
    return shp.expand_dims(util.as_operand(a), [util.canonicalize_axis(i, out_nd) for i in axes])


def broadcast_to(array: Any, shape: Any) -> Any:
    util.check_arraylike("broadcast_to", array)
    return util.broadcast_to(array, _shape(shape))


def broadcast_arrays(*args: Any) -> list[Any]:
    target = np.broadcast_shapes(*(np.shape(a) for a in args))
    return [util.broadcast_to(a, target) for a in args]


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*shapes))


def _promoted(arrays: Sequence[Any], name: str) -> list[Any]:
    if not isinstance(arrays, (list, tuple)) and not isinstance(arrays, Array):
        raise TypeError(f"{name} requires a sequence of arrays")
    arrays = list(arrays)
    util.check_arraylike(name, *arrays)
    if not arrays:
        raise ValueError(f"Need at least one array to {name.replace('concatenate', 'concatenate')}.")
    dtype, weak = dtypes.promote([util.type_of(a) for a in arrays])
    return [util.convert(util.as_operand(a), dtype, weak) for a in arrays]


def concatenate(arrays: Sequence[Any], axis: int | None = 0, dtype: Any = None) -> Any:
    """Join arrays along an existing axis (flattening them first when axis is None)."""
    if isinstance(arrays, Array):
        arrays = list(arrays)
    arrays = _promoted(arrays, "concatenate")
    if dtype is not None:
        arrays = [util.convert(a, dtypes.check_user_dtype(dtype), False) for a in arrays]
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    if builtins.any(np.ndim(a) == 0 for a in arrays):
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = util.canonicalize_axis(axis, np.ndim(arrays[0]))
    return shp.concatenate(arrays, axis)


def stack(arrays: Sequence[Any], axis: int = 0, out: Any = None, dtype: Any = None) -> Any:
    """Join arrays of one shape along a new axis."""
    if isinstance(arrays, Array):
        arrays = list(arrays)
    arrays = _promoted(arrays, "stack")
    if dtype is not None:
        arrays = [util.convert(a, dtypes.check_user_dtype(dtype), False) for a in arrays]
    if len({tuple(np.shape(a)) for a in arrays}) > 1:
        raise ValueError("All input arrays must have the same shape.")
    axis = util.canonicalize_axis(axis, np.ndim(arrays[0]) + 1)
    return shp.stack_p.bind(*arrays, axis=axis)


def vstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    return concatenate([atleast_2d(a) for a in tup], 0, dtype)


def hstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    arrs = [atleast_1d(a) for a in tup]
    return concatenate(arrs, 0 if np.ndim(arrs[0]) == 1 else 1, dtype)


def column_stack(tup: Sequence[Any]) -> Any:
    """Stack 1-D arrays as columns of a 2-D array (2-D arrays are joined as they are)."""
    cols = []
    for a in tup:
        a = util.as_operand(a)
        cols.append(shp.reshape(a, (np.size(a), 1)) if np.ndim(a) < 2 else a)
    return concatenate(cols, 1)


@staged_as_jit
def _atleast_1d(*arys: Any) -> Any:
    out = [util.as_operand(a) if np.ndim(a) >= 1 else shp.reshape(util.as_operand(a), (1,))
           for a in arys]
    return out[0] if len(out) == 1 else out


@staged_as_jit
def _atleast_2d(*arys: Any) -> Any:
    out = []
    for a in arys:
        a = util.as_operand(a)
        nd = np.ndim(a)
        out.append(a if nd >= 2 else shp.expand_dims(a, list(range(2 - nd))))
    return out[0] if len(out) == 1 else out


@staged_as_jit
def _atleast_3d(*arys: Any) -> Any:
    out = []
    for a in arys:
        a = util.as_operand(a)
        nd = np.ndim(a)
        if nd == 0:
            a = shp.expand_dims(a, [0, 1, 2])
        elif nd == 1:
            a = shp.expand_dims(a, [0, 2])
        elif nd == 2:
            a = shp.expand_dims(a, [2])
        out.append(a)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys: Any) -> Any:
    util.check_arraylike("atleast_1d", *arys)
    return _atleast_1d(*arys)


def atleast_2d(*arys: Any) -> Any:
    util.check_arraylike("atleast_2d", *arys)
    return _atleast_2d(*arys)


def atleast_3d(*arys: Any) -> Any:
    util.check_arraylike("atleast_3d", *arys)
    return _atleast_3d(*arys)


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    util.check_arraylike("astype", x)
    return util.convert(util.as_operand(x), dtypes.check_user_dtype(dtype), False)


# ---------------------------------------------------------------------------------------------
# Products
# ---------------------------------------------------------------------------------------------

def dot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """NumPy's dot: contract a's last axis with b's second-to-last (or only) axis."""
    util.check_arraylike("dot", a, b)
    a, b = util.promote_dtypes(a, b)
    out_dtype = np.dtype(a.dtype) if preferred_element_type is None else \
        dtypes.check_user_dtype(preferred_element_type)
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        return util.convert(lax.mul(*util.promote_shapes("dot", a, b)), out_dtype, False)
    contract_b = 0 if nb == 1 else nb - 2
    return dot_prims.dot_general(a, b, (((na - 1,), (contract_b,)), ((), ())), precision,
                                 out_dtype) if nb <= 2 else _dot_nd(a, b, out_dtype, precision)


def _dot_nd(a: Any, b: Any, out_dtype: np.dtype, precision: Any) -> Any:
    na, nb = np.ndim(a), np.ndim(b)
    out = dot_prims.dot_general(a, b, (((na - 1,), (nb - 2,)), ((), ())), precision, out_dtype)
    return out


def matmul(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Matrix product with NumPy's broadcasting of leading (batch) axes."""
    util.check_arraylike("matmul", a, b)
    a, b = util.promote_dtypes(a, b)
    out_dtype = np.dtype(a.dtype) if preferred_element_type is None else \
        dtypes.check_user_dtype(preferred_element_type)
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        raise ValueError("matmul operand must have at least one dimension")
    if na == 1 and nb == 1:
        return dot_prims.dot_general(a, b, (((0,), (0,)), ((), ())), precision, out_dtype)
    a2 = shp.expand_dims(a, [0]) if na == 1 else a
    b2 = shp.expand_dims(b, [1]) if nb == 1 else b
    batch = np.broadcast_shapes(np.shape(a2)[:-2], np.shape(b2)[:-2])
    nbatch = len(batch)
    a2 = util.broadcast_to(a2, batch + tuple(np.shape(a2)[-2:]))
    b2 = util.broadcast_to(b2, batch + tuple(np.shape(b2)[-2:]))
    dims = tuple(range(nbatch))
    out = dot_prims.dot_general(a2, b2, (((nbatch + 1,), (nbatch,)), (dims, dims)), precision,
                                out_dtype)
    if na == 1:
        out = shp.squeeze(out, [nbatch])
    if nb == 1:
        out = shp.squeeze(out, [np.ndim(out) - 1])
    return out


def vdot(a: Any, b: Any, *, precision: Any = None) -> Any:
    return dot(ravel(a), ravel(b), precision=precision)


def inner(a: Any, b: Any, *, precision: Any = None) -> Any:
    a, b = util.promote_dtypes(a, b)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return lax.mul(*util.promote_shapes("inner", a, b))
    return dot_prims.dot_general(a, b, (((np.ndim(a) - 1,), (np.ndim(b) - 1,)), ((), ())),
                                 precision, np.dtype(a.dtype))


def outer(a: Any, b: Any) -> Any:
    a, b = ravel(a), ravel(b)
    a, b = util.promote_dtypes(a, b)
    return lax.mul(shp.broadcast_in_dim(a, (np.size(a), np.size(b)), (0,)),
                   shp.broadcast_in_dim(b, (np.size(a), np.size(b)), (1,)))


def tensordot(a: Any, b: Any, axes: Any = 2, *, precision: Any = None) -> Any:
    a, b = util.promote_dtypes(a, b)
    na, nb = np.ndim(a), np.ndim(b)
    if isinstance(axes, int):
        ca, cb = tuple(range(na - axes, na)), tuple(range(axes))
    else:
        ca, cb = axes
        ca = (ca,) if isinstance(ca, int) else tuple(ca)
        cb = (cb,) if isinstance(cb, int) else tuple(cb)
        ca = tuple(util.canonicalize_axis(i, na) for i in ca)
        cb = tuple(util.canonicalize_axis(i, nb) for i in cb)
    return dot_prims.dot_general(a, b, ((ca, cb), ((), ())), precision, np.dtype(a.dtype))


def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    """Indices of the non-zero elements (needs a concrete array unless `size` is given)."""
    a = util.as_operand(a)
    if isinstance(a, Tracer):
        raise errors.ConcretizationTypeError(
            a, "The size argument of jnp.nonzero must be statically specified to use "
               "jnp.nonzero within JAX transformations.")
    idx = np.nonzero(np.asarray(a))
    if size is not None:
        fill = 0 if fill_value is None else fill_value
        idx = tuple(np.concatenate([i[:size], np.full(builtins.max(size - len(i), 0), fill)])
                    for i in idx)
    return tuple(ArrayImpl(i.astype(dtypes.default_int_dtype()), False) for i in idx)


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


