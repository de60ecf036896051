"""More lax operations used by jnp: bitcast_convert_type, stop_gradient, copy, the cumulative
reductions (cumsum, cumprod, cummax, cummin, cumlogsumexp), sort and split; and lax-level
helpers that bind existing primitives (full, full_like, tile, broadcast_shapes, broadcast_to,
asarray).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.primitives._fp import ignore_fp_errors
from pyjax._src.backend.dispatch import private_buffer
from pyjax._src.core import dtypes
from pyjax._src.core.array import Array, ArrayImpl, weak_constant
from pyjax._src.core.avals import ShapedArray
from pyjax._src.parallel import propagation
from pyjax._src.primitives import elementwise as ew
from pyjax._src.primitives import shape as shp
from pyjax._src.primitives._accumulation import accumulation_dtype
from pyjax._src.primitives._rules import ANY, NUMBER, check_kinds, make_primitive
from pyjax._src.transforms import ad
from pyjax._src.tree_util import tree_map


def _canonical_axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else axis


# -- bitcast_convert_type ---------------------------------------------------------------------

def _bitcast_abstract(x: ShapedArray, *, new_dtype: np.dtype) -> ShapedArray:
    if x.dtype != new_dtype and any(d == dtypes.bool_ or dtypes.is_complex(d)
                                    for d in (x.dtype, new_dtype)):
        raise TypeError("lax.bitcast_convert_type does not support bool or complex values "
                        "unless the operand and destination types match. Got operand "
                        f"dtype={x.dtype}, new_dtype={new_dtype}. Consider using the arr.view() "
                        "method instead.")
    old_bits, new_bits = x.dtype.itemsize * 8, new_dtype.itemsize * 8
    if old_bits == new_bits:
        shape = x.shape
    elif old_bits > new_bits:
        shape = (*x.shape, old_bits // new_bits)
    else:
        last = x.shape[-1] if x.shape else 1
        if last * old_bits != new_bits:
            raise ValueError(f"Attempting to convert array of shape {x.shape} from {x.dtype} of "
                             f"size {old_bits} bits to {new_dtype} of size {new_bits}, bits but "
                             f"{last} * {old_bits} != {new_bits}")
        shape = x.shape[:-1]
    return ShapedArray(shape, new_dtype, False)


def _bitcast_impl(x: np.ndarray, *, new_dtype: np.dtype) -> np.ndarray:
    old, new = x.dtype.itemsize, new_dtype.itemsize
    if old < new:
        return np.ascontiguousarray(x).view(new_dtype).reshape(x.shape[:-1])
    return np.ascontiguousarray(x).view(new_dtype).reshape(
        x.shape if old == new else (*x.shape, old // new))


bitcast_convert_type_p = make_primitive("bitcast_convert_type", _bitcast_impl, _bitcast_abstract)


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """Reinterpret the bits of `operand` as `new_dtype` (adding or removing a trailing axis
    when the widths differ)."""
    return bitcast_convert_type_p.bind(operand, new_dtype=dtypes.check_user_dtype(new_dtype))


# -- stop_gradient and copy: identities ------------------------------------------------------

stop_gradient_p = make_primitive("stop_gradient", lambda x: x, lambda x: x)
copy_p = make_primitive("copy", np.copy, lambda x: x)


def _stop_gradient(x: Any) -> Any:
    """One leaf: keys pass through; JVP tracers are peeled to their primals first, so that the
    gradient stops for every level of differentiation at once (as JAX does)."""
    from pyjax._src.random.keys import KeyTy
    if isinstance(getattr(x, "dtype", None), KeyTy):
        return x
    while isinstance(x, ad.JVPTracer):
        x = x.primal
    return stop_gradient_p.bind(x)


def stop_gradient(x: Any) -> Any:
    """The identity on every leaf of `x`, through which no gradient flows."""
    return tree_map(_stop_gradient, x)


def array_copy(x: Any) -> Any:
    """A copy of `x` (the `copy` equation jnp.array records for a traced input)."""
    return copy_p.bind(x)


# -- cumulative reductions --------------------------------------------------------------------

def _first_step(x: np.ndarray, axis: int, first: Callable) -> np.ndarray:
    """x with its first slice along `axis` replaced by first(slice), copied only where that
    changes a bit (a -0. or a subnormal)."""
    index = (slice(None),) * axis + (slice(0, 1),)
    with ignore_fp_errors():
        head = np.asarray(first(x[index]), x.dtype)
    if head.tobytes() == x[index].tobytes():
        return x
    x = x.copy()
    x[index] = head
    return x


def _cumulative(name: str, np_fn: Callable, accumulates: bool = False,
                first: Callable | None = None) -> Any:
    """A cumulative reduction primitive; `accumulates` (sums, products) rounds at every step,
    so long ones run wide.  `first(x)` is XLA's first step, the operation applied to the
    identity and x (NumPy copies x instead): for inexact x it turns -0. into +0. in sums and
    flushes a subnormal."""
    def abstract_eval(x: ShapedArray, *, axis: int, reverse: bool) -> ShapedArray:
        if axis < 0:
            raise ValueError("XLA operations do not allow negative axes")
        if axis >= x.ndim:
            raise ValueError(f"axis {axis} is out of bounds for array of shape {x.shape}")
        check_kinds(name, NUMBER, x)
        return x

    def impl(x: np.ndarray, *, axis: int, reverse: bool) -> np.ndarray:
        if reverse:
            x = np.flip(x, axis)
        if first is not None and x.shape[axis] and dtypes.is_inexact(x.dtype):
            x = _first_step(x, axis, first)
        wide = accumulation_dtype(x.dtype, x.shape[axis]) if accumulates else None
        with ignore_fp_errors():
            if wide is not None:  # long running sums/products: XLA's are near-exact
                out = np.asarray(np_fn(x.astype(wide), axis)).astype(x.dtype)
            elif x.dtype in (dtypes.float16, dtypes.bfloat16):  # XLA accumulates in float32
                out = np.asarray(np_fn(x.astype(np.float32), axis)).astype(x.dtype)
            else:
                out = np.asarray(np_fn(x, axis), dtype=x.dtype)
        return np.flip(out, axis) if reverse else out

    return make_primitive(name, impl, abstract_eval)


cumsum_p = _cumulative("cumsum", lambda x, a: np.cumsum(x, a, dtype=x.dtype), True,
                       lambda x: x + np.zeros((), x.dtype))
cumprod_p = _cumulative("cumprod", lambda x, a: np.cumprod(x, a, dtype=x.dtype), True,
                        lambda x: x * np.ones((), x.dtype))


def _zero_signed_scan(ufunc: Any, sign: int) -> Callable:
    """ufunc.accumulate with XLA's signed zeros: a running max is +0. once a +0. was seen
    among the zeros (NumPy keeps the first of equal values), a running min -0."""
    zero = np.float64(0.0 if sign > 0 else -0.0)

    def scan(x: np.ndarray, axis: int) -> np.ndarray:
        out = ufunc.accumulate(x, axis)
        if (x.dtype.kind == "f" or x.dtype == dtypes.bfloat16) and \
                np.count_nonzero(out) != out.size:
            wanted = (x == 0) & (np.signbit(x) == (sign < 0))
            seen = np.logical_or.accumulate(wanted, axis)
            out = np.where((out == 0) & seen, zero.astype(x.dtype), out)
        return out
    return scan


cummax_p = _cumulative("cummax", _zero_signed_scan(np.maximum, 1),
                       first=lambda x: np.maximum(x, np.asarray(-np.inf, x.dtype)))
cummin_p = _cumulative("cummin", _zero_signed_scan(np.minimum, -1),
                       first=lambda x: np.minimum(x, np.asarray(np.inf, x.dtype)))
cumlogsumexp_p = _cumulative("cumlogsumexp", lambda x, a: np.logaddexp.accumulate(x, a))


def _cumulative_fn(prim: Any) -> Callable:
    def fn(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        return prim.bind(operand, axis=int(axis), reverse=bool(reverse))
    fn.__name__ = fn.__qualname__ = prim.name
    fn.__doc__ = f"Running `{prim.name}` along `axis` (from the end when `reverse`)."
    return fn


cumsum, cumprod, cummax, cummin, cumlogsumexp = map(
    _cumulative_fn, (cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p))


# -- sort ---------------------------------------------------------------------------------------

def _sort_abstract(*avals: ShapedArray, dimension: int, is_stable: bool, num_keys: int
                   ) -> list[ShapedArray]:
    if any(a.shape != avals[0].shape for a in avals[1:]):
        shapes = " ".join(str(a.shape) for a in avals)
        raise TypeError(f"Arguments to sort must have equal shapes, got: {shapes}")
    check_kinds("sort", ANY, *avals)
    return list(avals)


def _sort_key(x: np.ndarray) -> np.ndarray:
    """x as NumPy can order it: ml_dtypes floats (bfloat16, float8) compare as float32."""
    return x.astype(np.float32) if dtypes.is_float(x.dtype) and x.dtype.kind == "V" else x


def _sort_impl(*xs: np.ndarray, dimension: int, is_stable: bool, num_keys: int) -> list:
    """Stable sort (NaNs last, -0.0 equal to 0.0, as JAX canonicalises them)."""
    keys = [np.moveaxis(_sort_key(x), dimension, -1) for x in xs[:num_keys]]
    order = np.lexsort(keys[::-1], axis=-1)  # lexsort's primary key is its last
    order = np.moveaxis(order, -1, dimension)
    return [np.take_along_axis(x, order, axis=dimension) for x in xs]


sort_p = make_primitive("sort", _sort_impl, _sort_abstract, multiple_results=True)


def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """Sort along `dimension`; a sequence of operands is sorted by its first `num_keys`."""
    if isinstance(operand, (list, tuple)):
        if not operand:
            raise TypeError("Sort requires at least one operand")
        if not 1 <= num_keys <= len(operand):
            raise ValueError(f"num_keys={num_keys} must be between 1 and "
                             f"len(operand)={len(operand)}")
        dim = _canonical_axis(dimension, len(np.shape(operand[0])))
        return tuple(sort_p.bind(*operand, dimension=dim, is_stable=bool(is_stable),
                                 num_keys=int(num_keys)))
    if num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    dim = _canonical_axis(dimension, len(np.shape(operand)))
    return sort_p.bind(operand, dimension=dim, is_stable=bool(is_stable), num_keys=1)[0]


def sort_key_val(keys: Any, values: Any, dimension: int = -1, is_stable: bool = True
                 ) -> tuple[Any, Any]:
    """Sort `keys` along `dimension` and permute `values` alike."""
    dim = _canonical_axis(dimension, len(np.shape(keys)))
    k, v = sort_p.bind(keys, values, dimension=dim, is_stable=bool(is_stable), num_keys=1)
    return k, v


# -- split --------------------------------------------------------------------------------------

def _split_abstract(x: ShapedArray, *, sizes: tuple, axis: int) -> list[ShapedArray]:
    if any(s < 0 for s in sizes):
        raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
    if x.shape[axis] != sum(int(s) for s in sizes):
        raise ValueError(f"Sum of sizes {np.sum(sizes)} must be equal to dimension {axis} of "
                         f"the operand shape {list(x.shape)}")
    out = []
    for size in sizes:
        shape = list(x.shape)
        shape[axis] = int(size)
        out.append(ShapedArray(tuple(shape), x.dtype, x.weak_type))
    return out


def _split_impl(x: np.ndarray, *, sizes: tuple, axis: int) -> list:
    return np.split(x, np.cumsum([int(s) for s in sizes])[:-1], axis=axis)


split_p = make_primitive("split", _split_impl, _split_abstract, multiple_results=True)


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list:
    """Cut `operand` along `axis` into pieces of the given sizes."""
    operand = asarray(operand)
    return split_p.bind(operand, sizes=tuple(sizes),
                        axis=_canonical_axis(axis, len(np.shape(operand))))


# -- helpers over existing primitives ---------------------------------------------------------

def asarray(x: Any) -> Any:
    """Arrays pass through; scalars and NumPy values become Arrays (Python scalars weak)."""
    if isinstance(x, Array):
        return x
    return ArrayImpl(*private_buffer(x))  # a copy of a caller's NumPy array, not a view


_PY_SCALARS = (bool, int, float, complex)


def _is_weak(x: Any) -> bool:
    aval = getattr(x, "aval", None)
    return aval.weak_type if aval is not None else type(x) in (int, float, complex)


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    """An array of `shape` filled with the scalar `fill_value` (weak when it is)."""
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise TypeError("broadcast_in_dim shape must have every element be nonnegative, got "
                        f"{shape}.")
    if np.shape(fill_value):
        raise TypeError("full must be called with scalar fill_value, got fill_value.shape "
                        f"{np.shape(fill_value)}.")
    if dtype is None:
        fill_dtype, weak = dtypes.dtype_and_weak(fill_value)
    else:
        fill_dtype, weak = dtypes.check_user_dtype(dtype), False
    if type(fill_value) in _PY_SCALARS:  # a constant: converted now (ints wrap, as in JAX)
        fill = weak_constant(fill_value, np.asarray(fill_value).astype(fill_dtype), weak)
    else:
        fill = ew.convert_element_type(fill_value, fill_dtype, weak)
    return shp.broadcast_in_dim(fill, shape, ()) if shape else fill


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    """Like `full`, with the shape and dtype (and weak type) of `x` unless given."""
    fill_shape = np.shape(x) if shape is None else tuple(int(d) for d in shape)
    if dtype is None and isinstance(getattr(x, "dtype", None), dtypes.ExtendedDType):
        return _full_keys(fill_shape, fill_value, x.dtype)
    weak = dtype is None and _is_weak(x)
    dt = dtypes.dtype_and_weak(x)[0] if dtype is None else dtypes.check_user_dtype(dtype)
    return full(fill_shape, ew.convert_element_type(fill_value, dt, weak))


def _full_keys(shape: tuple, fill_value: Any, dtype: Any) -> Any:
    """Keys of `dtype` filled with `fill_value` (a key array, or a number every word of the
    key data takes), wrapped key data as JAX's KeyTyRules.full makes them."""
    from pyjax._src.primitives import prng
    physical = (*shape, *dtype._impl.key_shape)
    if isinstance(getattr(fill_value, "dtype", None), dtypes.ExtendedDType):
        data = broadcast_to(prng.random_unwrap(fill_value), physical)
    else:
        data = full(physical, fill_value, dtypes.uint32)
    return prng.random_wrap(data, impl=dtype._impl)


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """Repeat `operand` reps[i] times along axis i (reps has one entry per axis)."""
    reps = tuple(int(r) for r in reps)
    if len(reps) != np.ndim(operand):
        raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)="
                        f"{len(reps)} and x.ndim={np.ndim(operand)}.")
    return shp.tile_p.bind(operand, reps=reps)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """NumPy's broadcast of shapes, with JAX's error message."""
    try:
        return tuple(np.broadcast_shapes(*(tuple(s) for s in shapes)))
    except ValueError:
        raise ValueError("Incompatible shapes for broadcasting: shapes="
                         f"{[tuple(s) for s in shapes]}") from None


def broadcast_to(x: Any, shape: Sequence[int], sharding: Any = None) -> Any:
    """`x` broadcast to `shape` by one broadcast_in_dim (size-1 axes stretch in place);
    `sharding`: the result's split over Explicit mesh axes, when its type has one."""
    shape = tuple(int(d) for d in shape)
    old = tuple(np.shape(x))
    if old == shape:
        return asarray(x)
    if len(shape) < len(old):
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: arr_shape={old} "
                         f"shape={shape}")
    nlead = len(shape) - len(old)
    if any(o not in (1, n) for o, n in zip(old, shape[nlead:])):
        aval = ShapedArray(old, dtypes.dtype_and_weak(x)[0])
        raise ValueError(f"Incompatible types for broadcasting: input type={aval.str_short()} "
                         f"and requested type={ShapedArray(shape, aval.dtype).str_short()}")
    return shp.broadcast_in_dim_p.bind(asarray(x), shape=shape,
                                       broadcast_dimensions=tuple(range(nlead, len(shape))),
                                       sharding=sharding)


# ---------------------------------------------------------------------------------------------
# Autodiff (JAX's rules)
# ---------------------------------------------------------------------------------------------

def _stop_gradient_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
    x, = primals
    return stop_gradient(x), ad.Zero.like(x)


stop_gradient_p.jvp = _stop_gradient_jvp
ad.deflinear(copy_p, lambda ct, x: [copy_p.bind(ct)])
ad.defjvp_zero(bitcast_convert_type_p)
ad.deflinear(cumsum_p, lambda ct, x, *, axis, reverse: [
    cumsum_p.bind(ct, axis=axis, reverse=not reverse)])


def _split_transpose(cts: Sequence[Any], operand: Any, *, sizes: tuple, axis: int) -> list:
    if all(type(c) is ad.Zero for c in cts):
        return [ad.Zero(operand.aval)]
    return [shp.concatenate([ad.instantiate(c) for c in cts], axis)]


ad.deflinear(split_p, _split_transpose)


# -- the other cumulative reductions: jvp of a parallel prefix scan ---------------------------

def _associative_scan(*args: Any, **kwargs: Any) -> Any:
    """lax.associative_scan (imported when first used: control flow loads after this file)."""
    from pyjax._src.primitives.control_flow.associative_scan import associative_scan
    return associative_scan(*args, **kwargs)


def _scan_jvp(combine: Callable) -> Callable:
    """The jvp of a cumulative reduction: that of the prefix scan with `combine` (reduce-window
    implementations are not arbitrarily differentiable, so JAX differentiates the scan)."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], *, axis: int, reverse: bool
            ) -> tuple:
        scan = lambda x: [_associative_scan(combine, x, reverse=reverse, axis=axis)]  # noqa: E731
        outs, outs_dot = ad.jvp_flat(scan, primals, tangents)
        return outs[0], outs_dot[0]
    return jvp


def _replace_inf(x: Any) -> Any:
    """x with +inf (of the real part) replaced by 0."""
    re = ew.real(x) if dtypes.is_complex(dtypes.dtype_and_weak(x)[0]) else x
    dtype = dtypes.dtype_and_weak(re)[0]
    inf = ArrayImpl(np.array(np.inf, dtype), False)
    return ew.select(ew.eq(re, inf), full_like(x, 0), x)


def _logaddexp(a: Any, b: Any) -> Any:
    """log(exp(a) + exp(b)) without overflow (lax's logaddexp, whose jvp is custom)."""
    dtype = dtypes.dtype_and_weak(a)[0]
    amax = ew.max(a, b)
    if not dtypes.is_complex(dtype):
        delta = ew.sub(a, b)
        return ew.select(ew.ne(delta, delta), ew.add(a, b),
                         ew.add(amax, ew.log1p(ew.exp(ew.neg(ew.abs(delta))))))
    delta = ew.sub(ew.add(a, b), ew.mul(amax, ArrayImpl(np.array(2, dtype), False)))
    out = ew.add(amax, ew.log1p(ew.exp(delta)))
    imag = ew.imag(out)
    real_dtype = dtypes.dtype_and_weak(imag)[0]
    pi, two_pi, zero = (ArrayImpl(np.array(v, real_dtype), False) for v in (np.pi, 2 * np.pi, 0))
    rem = ew.rem(ew.add(imag, pi), two_pi)
    rem = ew.select(ew.lt(rem, zero), ew.add(rem, two_pi), rem)
    return ew.complex(ew.real(out), ew.sub(rem, pi))


def _logaddexp_pair(a: tuple, b: tuple) -> tuple:
    """(logaddexp, its tangent) of primal-tangent pairs, with JAX's custom jvp (tangents
    weighted by exp(x - out), infinities replaced so that -inf inputs get weight 0)."""
    (x1, t1), (x2, t2) = a, b
    out = _logaddexp(x1, x2)
    r_out = _replace_inf(out)
    tangent = ew.add(ew.mul(t1, ew.exp(ew.sub(_replace_inf(x1), r_out))),
                     ew.mul(t2, ew.exp(ew.sub(_replace_inf(x2), r_out))))
    return out, tangent


def _cumlogsumexp_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, axis: int,
                      reverse: bool) -> tuple:
    """The prefix scan over (value, tangent) pairs with logaddexp's custom jvp."""
    (x,), (t,) = primals, tangents
    t = ad.instantiate(t)
    return _associative_scan(_logaddexp_pair, (x, t), reverse=reverse, axis=axis)


cumprod_p.jvp = _scan_jvp(ew.mul)
cummax_p.jvp = _scan_jvp(ew.max)
cummin_p.jvp = _scan_jvp(ew.min)
cumlogsumexp_p.jvp = _cumlogsumexp_jvp


# -- sort: carry the permutation along and gather the tangents with it ------------------------

def _sort_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, dimension: int,
              is_stable: bool, num_keys: int) -> tuple:
    from pyjax._src.primitives.indexing import (
        GatherDimensionNumbers, GatherScatterMode, gather)
    shape = np.shape(primals[0])
    index_dtype = np.dtype(np.uint64) if any(d > np.iinfo(np.uint32).max for d in shape) \
        else np.dtype(np.uint32)
    sorted_all = sort_p.bind(*primals, shp.broadcasted_iota(index_dtype, shape, dimension),
                             dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    batch_dims = tuple(np.delete(np.arange(len(shape), dtype=np.int64), dimension))
    dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(dimension,),
                                   start_index_map=(dimension,),
                                   operand_batching_dims=batch_dims,
                                   start_indices_batching_dims=batch_dims)
    idx = shp.expand_dims(sorted_all[-1], (len(shape),))
    tangents_out = [t if type(t) is ad.Zero else
                    gather(t, idx, dnums, (1,) * len(shape),
                           mode=GatherScatterMode.PROMISE_IN_BOUNDS)
                    for t in tangents]
    return list(sorted_all[:-1]), tangents_out


sort_p.jvp = _sort_jvp


# ---------------------------------------------------------------------------------------------
# Batching (JAX's rules)
# ---------------------------------------------------------------------------------------------

def _bitcast_batch(vals: Sequence[Any], dims: Sequence[Any], *, new_dtype: np.dtype) -> tuple:
    """Elementwise, except that a widening bitcast consumes the last axis: a batch axis there
    moves to the front first."""
    from pyjax._src.transforms.batching import move_axis
    (x,), (d,) = vals, dims
    old = dtypes.dtype_and_weak(x)[0]
    if old.itemsize < new_dtype.itemsize and d == np.ndim(x) - 1:
        x, d = move_axis(x, d, 0), 0
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), d


def _cumulative_batch(prim: Any) -> Callable:
    def rule(vals: Sequence[Any], dims: Sequence[Any], *, axis: int, reverse: bool) -> tuple:
        (x,), (d,) = vals, dims
        return prim.bind(x, axis=axis if axis < d else axis + 1, reverse=reverse), d
    return rule


def _sort_batch(vals: Sequence[Any], dims: Sequence[Any], *, dimension: int, is_stable: bool,
                num_keys: int) -> tuple:
    """Every operand batched at the first batched operand's axis (unbatched ones broadcast)."""
    from pyjax._src.transforms.batching import move_axis
    proto, bdim = next((v, d) for v, d in zip(vals, dims) if d is not None)
    shape = np.shape(proto)
    kept = [i for i in range(len(shape)) if i != bdim]
    args = [shp.broadcast_in_dim(v, shape, kept) if d is None else move_axis(v, d, bdim)
            for v, d in zip(vals, dims)]
    outs = sort_p.bind(*args, dimension=dimension + (bdim <= dimension), is_stable=is_stable,
                       num_keys=num_keys)
    return outs, [bdim] * len(outs)


def _split_batch(vals: Sequence[Any], dims: Sequence[Any], *, sizes: tuple, axis: int) -> tuple:
    (x,), (d,) = vals, dims
    outs = split_p.bind(x, sizes=sizes, axis=axis + 1 if axis >= d else axis)
    return outs, [d] * len(outs)


stop_gradient_p.batch = lambda vals, dims: (stop_gradient(vals[0]), dims[0])
copy_p.batch = lambda vals, dims: (copy_p.bind(vals[0]), dims[0])
bitcast_convert_type_p.batch = _bitcast_batch
for _prim in (cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p):
    _prim.batch = _cumulative_batch(_prim)
sort_p.batch = _sort_batch
split_p.batch = _split_batch

# how splits over mesh axes flow (parallel/propagation.py)
for _prim in (stop_gradient_p, copy_p, bitcast_convert_type_p, cumsum_p, cumprod_p, cummax_p,
              cummin_p, cumlogsumexp_p):
    _prim.sharding_rule = propagation.elementwise
def _split_sharding(eqn: Any, ins: list, sizes: dict) -> list:
    return [ins[0]] * len(eqn.outvars)


split_p.sharding_rule = _split_sharding
