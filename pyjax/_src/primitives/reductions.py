"""Reduction primitives over static axes: sum, max, min, prod, and, or, xor, argmax, argmin."""
from __future__ import annotations

import math

from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.backend.specialized import exact
from pyjax._src.config import config
from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import pp_eqn_standard
from pyjax._src.parallel import propagation
from pyjax._src.primitives._accumulation import accumulation_dtype
from pyjax._src.primitives.elementwise import _count_nonzero
from pyjax._src.primitives._rules import (
    ANY, BOOL, FLOAT, INT, INTEGRAL, NUMBER, UINT, check_kinds, exact_ufunc, make_primitive)
from pyjax._src.transforms import ad


def _reduced_shape(x: ShapedArray, axes: tuple) -> tuple:
    for a in axes:
        if not 0 <= a < x.ndim:
            raise ValueError(f"reduction axes {axes} out of range for operand of shape {x.shape}")
    return tuple(s for i, s in enumerate(x.shape) if i not in axes)


def _broadcast_axes(x: np.ndarray, axes: tuple) -> tuple[np.ndarray, tuple, int]:
    """Reduced axes along which x is a broadcast (stride 0, as zeros((10**12,)) is): x with
    them cut to length 1, and how many copies they held.  Reducing the rest costs the real
    data, not the broadcast size (XLA folds these too)."""
    idle = tuple(a for a in axes if x.strides[a] == 0 and x.shape[a] > 1)
    if not idle:
        return x, axes, 1
    copies = math.prod(x.shape[a] for a in idle)
    index = tuple(slice(0, 1) if a in idle else slice(None) for a in range(x.ndim))
    return x[index], axes, copies


def _reduction(name: str, impl: Callable, kinds: tuple, *, out_sharding: bool = False,
               keep_weak: bool = True, repeats: Callable | None = None,
               idempotent: bool = False) -> Any:
    """A reduction primitive computed by `impl(x, axes)`, whose `impl.for_type(dtype, shape,
    axes, keepdims=False)` gives an exact kernel for operands of one type (eager plans).
    Broadcast axes are folded when the reduction is idempotent (max, and) or
    `repeats(result, copies)` says what `copies` identical values reduce to."""
    folds = idempotent or repeats is not None

    def abstract_eval(x: ShapedArray, *, axes: tuple, out_sharding: Any = None) -> ShapedArray:
        check_kinds(name, kinds, x)
        # JAX keeps the weak type, except for the bitwise reductions (reduce_and/or/xor)
        return ShapedArray(_reduced_shape(x, axes), x.dtype, x.weak_type and keep_weak)

    def run(x: np.ndarray, *, axes: tuple, out_sharding: Any = None) -> np.ndarray:
        if not axes:  # reducing nothing is the identity (XLA's too: no arithmetic to flush)
            return x
        copies = 1
        if folds and 0 in x.strides:
            x, axes, copies = _broadcast_axes(x, axes)
        if x.dtype == dtypes.bfloat16:  # ml_dtypes warns on NaN; XLA is silent
            with np.errstate(invalid="ignore"):
                out = np.asarray(impl(x, axes), dtype=x.dtype)
        else:
            out = np.asarray(impl(x, axes), dtype=x.dtype)
        if copies > 1:  # folded broadcast axes: `repeats` says what the copies reduce to
            out = np.asarray(repeats(out, copies), dtype=x.dtype) if repeats else out
        return out

    def specialize(x: ShapedArray, *, axes: tuple, out_sharding: Any = None) -> Any:
        """`run` for operands of x's type, for eager plans: its kernel chosen once, with the
        same keeping the reduced axes, and (where `run` folds) `run` for broadcasts."""
        if x.dtype == dtypes.bfloat16 or not axes:
            return None
        kernel = impl.for_type(x.dtype, x.shape, axes)
        kept = kernel.keepdims = impl.for_type(x.dtype, x.shape, axes, keepdims=True)
        kept.shape = _kept_shape(x.shape, axes)
        if folds:
            kernel.broadcasts = lambda b: run(b, axes=axes)
            kept.broadcasts = lambda b: run(b, axes=axes).reshape(kept.shape)
        return kernel

    prim = make_primitive(name, run, abstract_eval)
    prim.specialize = specialize
    if not out_sharding:
        prim.pp_rule = lambda eqn, ctx: pp_eqn_standard(eqn, ctx, ["axes"])
    defreducer(prim)
    return prim


def defreducer(prim: Any) -> None:
    """vmap a reduction over static `axes`: the axes at or past the batch axis shift by one
    (NumPy integers, as JAX computes them with np.where, so printed params match); the batch
    axis stays where it lands among the kept axes."""
    def batch(vals: Sequence[Any], dims: Sequence[Any], *, axes: tuple, **params: Any) -> tuple:
        x, = vals
        dim, = dims
        new_axes = tuple(np.where(np.less(axes, dim), axes, np.add(axes, 1)))
        kept = list(np.delete(np.arange(np.ndim(x)), new_axes))
        return prim.bind(x, axes=new_axes, **params), int(kept.index(dim))
    prim.batch = batch


def _lowest(dtype: np.dtype) -> Any:
    if dtype == dtypes.bool_:
        return False
    if dtypes.is_integer(dtype):
        return dtypes.iinfo(dtype).min
    return -np.inf


def _highest(dtype: np.dtype) -> Any:
    if dtype == dtypes.bool_:
        return True
    if dtypes.is_integer(dtype):
        return dtypes.iinfo(dtype).max
    return np.inf


def max_identity(dtype: np.dtype) -> np.ndarray:
    """The identity of max (the lowest value of `dtype`), as a 0-d array of that dtype."""
    return np.asarray(_lowest(dtype), dtype)


def min_identity(dtype: np.dtype) -> np.ndarray:
    """The identity of min (the highest value of `dtype`), as a 0-d array of that dtype."""
    return np.asarray(_highest(dtype), dtype)


def _kernel(ufunc: np.ufunc, result: np.dtype, shape: tuple, axes: tuple, keepdims: bool,
            **kwargs: Any) -> Callable:
    """`ufunc.reduce` of operands of (result, shape) along `axes` (keeping them, of size 1,
    if `keepdims`), as an exact impl: an ndarray of dtype `result`, even when all axes are
    reduced (`exact_ufunc`)."""
    if keepdims:
        return exact_ufunc(ufunc.reduce, result, len(shape), axis=axes, keepdims=True,
                           **kwargs)
    return exact_ufunc(ufunc.reduce, result, len(shape) - len(axes), axis=axes, **kwargs)


def _kept_shape(shape: tuple, axes: tuple) -> tuple:
    """The shape of a reduction along `axes` that keeps them (keepdims=True)."""
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _exact(fn: Callable, dtype: np.dtype, shape: tuple, axes: tuple,
           keepdims: bool) -> Callable:
    """fn (a reduction along `axes` of operands of `shape`) as an exact impl: its result
    converted to an ndarray of `dtype`, given the kept axes if `keepdims`."""
    if keepdims:
        kept = _kept_shape(shape, axes)
        return exact(lambda b: np.asarray(fn(b), dtype).reshape(kept))
    return exact(lambda b: np.asarray(fn(b), dtype))


def _accumulating(ufunc: np.ufunc) -> Callable:
    """Sum or product in the input dtype, except half-precision floats, which XLA accumulates
    in float32 (a bfloat16 sum of 1000 ones is 1000, not 256), and long float reductions,
    accumulated wide (see _accumulation)."""
    def reduce(x: np.ndarray, axes: tuple, dtype: np.dtype, wide: np.dtype | None) -> Any:
        if wide is not None:
            return np.asarray(ufunc.reduce(x, axis=axes, dtype=wide)).astype(dtype)
        if dtype in (dtypes.float16, dtypes.bfloat16):
            return ufunc.reduce(x, axis=axes, dtype=np.float32).astype(dtype)
        return ufunc.reduce(x, axis=axes, dtype=dtype)

    def for_type(dtype: np.dtype, shape: tuple, axes: tuple, keepdims: bool = False
                 ) -> Callable:
        """The reduction of operands of (dtype, shape) along `axes`, its accumulator chosen."""
        wide = accumulation_dtype(dtype, math.prod(shape[a] for a in axes))
        if wide is None and dtype not in (dtypes.float16, dtypes.bfloat16):  # the common
            return _kernel(ufunc, dtype, shape, axes, keepdims, dtype=dtype)  # case, direct
        return _exact(lambda b: reduce(b, axes, dtype, wide), dtype, shape, axes, keepdims)

    def fn(x: np.ndarray, axes: tuple) -> np.ndarray:
        return reduce(x, axes, x.dtype,
                      accumulation_dtype(x.dtype, math.prod(x.shape[a] for a in axes)))
    fn.for_type = for_type
    return fn


def _choosing(ufunc: np.ufunc, start: Callable) -> Callable:
    """max or min (`ufunc`), starting from `start(dtype)` (so empty reductions give it)."""
    def fn(x: np.ndarray, axes: tuple) -> Any:
        return ufunc.reduce(x, axis=axes, initial=start(x.dtype))
    fn.for_type = lambda dtype, shape, axes, keepdims=False: _kernel(
        ufunc, dtype, shape, axes, keepdims, initial=start(dtype))
    return fn


def _bitwise(ufunc: np.ufunc, empty: Callable) -> Callable:
    """and, or or xor (`ufunc`); an empty operand reduces to `empty(dtype)`."""
    def fn(x: np.ndarray, axes: tuple) -> Any:
        if x.size:
            return ufunc.reduce(x, axis=axes)
        return np.full(_reduced_np(x, axes), empty(x.dtype), x.dtype)

    def for_type(dtype: np.dtype, shape: tuple, axes: tuple, keepdims: bool = False
                 ) -> Callable:
        size = math.prod(shape)
        if not size:
            return _exact(lambda b: fn(b, axes), dtype, shape, axes, keepdims)
        out_shape = _kept_shape(shape, axes) if keepdims else _reduced_np_shape(shape, axes)
        if dtype == dtypes.bool_ and ufunc is not np.bitwise_xor and math.prod(out_shape) == 1:
            return _counted(ufunc is np.bitwise_and, size, out_shape)
        return _kernel(ufunc, dtype, shape, axes, keepdims)
    fn.for_type = for_type
    return fn


def _reduced_np_shape(shape: tuple, axes: tuple) -> tuple:
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def _counted(every: bool, size: int, shape: tuple) -> Callable:
    """The and (`every`) or the or of a boolean operand of `size` elements into one element
    of `shape` (all(c), any(c), all(c, axis=1) of a single row), as an exact impl: counting
    the true elements (NumPy's C count_nonzero) and copying a prepared result costs a third
    of ufunc.reduce on small operands."""
    true, false = np.ones(shape, bool), np.zeros(shape, bool)
    if every:
        return exact(lambda b: (true if _count_nonzero(b) == size else false).copy())
    return exact(lambda b: (true if _count_nonzero(b) else false).copy())


reduce_sum_p = _reduction("reduce_sum", _accumulating(np.add), NUMBER, out_sharding=True,
                          repeats=lambda total, n: total * np.asarray(n, total.dtype))
_sum_abstract_eval = reduce_sum_p.abstract_eval


_HALF_FLOATS = (dtypes.float16, dtypes.bfloat16)


def _reduce_sum_abstract_eval(x: ShapedArray, *, axes: tuple, out_sharding: Any = None
                              ) -> ShapedArray:
    """With jax_allow_f16_reductions off, summing half-precision floats over more than one
    element is JAX's error."""
    if (x.dtype in _HALF_FLOATS and not config.allow_f16_reductions
            and not all(x.shape[a] == 1 for a in axes)):
        raise ValueError(f"reduce_sum on operand {x.str_short(short_dtypes=True)} is not "
                         "allowed when jax_allow_f16_reductions=False.")
    return _sum_abstract_eval(x, axes=axes, out_sharding=out_sharding)


reduce_sum_p.abstract_eval = _reduce_sum_abstract_eval


def _reduce_sum_transpose(ct: Any, x: Any, *, axes: tuple, out_sharding: Any = None) -> list:
    """Linear: the cotangent broadcast back along the summed axes."""
    from pyjax._src.primitives.shape import broadcast_in_dim_p
    if type(ct) is ad.Zero:
        return [ad.Zero(ad.tangent_aval(x.aval))]
    if not axes:  # an identity broadcast (JAX forwards it: no equation)
        return [ct]
    shape = x.aval.shape
    # NumPy integers, as JAX computes them (np.delete), so the printed params match
    kept = tuple(np.delete(np.arange(len(shape)), axes))
    return [broadcast_in_dim_p.bind(ct, shape=tuple(shape), broadcast_dimensions=kept,
                                    sharding=getattr(x.aval, "explicit_sharding", None))]


ad.deflinear(reduce_sum_p, _reduce_sum_transpose)
reduce_prod_p = _reduction("reduce_prod", _accumulating(np.multiply), NUMBER)


def _reduce_prod_jvp(primals: Any, tangents: Any, *, axes: tuple) -> tuple:
    """JAX's rule: the product as a tree of pairwise elementwise products (the reduced axes
    moved to the front and flattened, halved until one row is left), differentiated."""
    from pyjax._src.primitives import elementwise as ew
    from pyjax._src.primitives.extra import full
    from pyjax._src.primitives.indexing import slice_in_dim
    from pyjax._src.primitives.shape import pad, reshape, squeeze
    x, = primals
    t, = tangents
    shape = np.shape(x)
    kept = [i for i in range(len(shape)) if i not in axes]
    n = int(np.prod([shape[i] for i in axes], dtype=np.int64))
    new_shape = (n, *[shape[i] for i in kept])
    permutation = (*axes, *kept)
    one = ew._const(x, 1)

    def tree(v: Any) -> list:
        while np.shape(v)[0] > 1:
            size = np.shape(v)[0]
            half = (size + 1) // 2
            first, second = slice_in_dim(v, 0, half), slice_in_dim(v, half, None)
            if size - half != half:
                config = [(0, 0, 0)] * len(new_shape)
                config[0] = (0, 1, 0)
                second = pad(second, one, config)
            v = ew.mul(first, second)
        if np.shape(v)[0] == 0:
            return [full(new_shape[1:], one)]
        return [squeeze(v, (0,))]

    outs, outs_dot = ad.jvp_flat(tree, [reshape(x, new_shape, permutation)],
                                 [reshape(ad.instantiate(t), new_shape, permutation)])
    return outs[0], ad.instantiate(outs_dot[0])


reduce_prod_p.jvp = _reduce_prod_jvp


def _reduce_chooser_jvp(g: Any, ans: Any, x: Any, *, axes: tuple) -> Any:
    """The tangent at the chosen elements, averaged over ties (JAX's convention)."""
    from pyjax._src.primitives import elementwise as ew
    from pyjax._src.primitives.shape import reshape
    shape = [1 if i in axes else d for i, d in enumerate(np.shape(x))]
    where = ew.convert_element_type(ew.eq(x, reshape(ans, shape)), g.dtype)
    counts = reduce_sum(where, axes)
    return ew.div(reduce_sum(ew.mul(g, where), axes), counts)


reduce_max_p = _reduction("reduce_max", _choosing(np.maximum, _lowest), ANY, idempotent=True)
ad.defjvp2(reduce_max_p, _reduce_chooser_jvp)
reduce_min_p = _reduction("reduce_min", _choosing(np.minimum, _highest), ANY, idempotent=True)
ad.defjvp2(reduce_min_p, _reduce_chooser_jvp)


def _all_ones(dtype: np.dtype) -> Any:
    return np.asarray(True if dtype == dtypes.bool_ else -1).astype(dtype)[()]


def _zero(dtype: np.dtype) -> Any:
    return 0


reduce_and_p = _reduction("reduce_and", _bitwise(np.bitwise_and, _all_ones), INTEGRAL,
                          keep_weak=False, idempotent=True)
reduce_or_p = _reduction("reduce_or", _bitwise(np.bitwise_or, _zero), INTEGRAL,
                         keep_weak=False, idempotent=True)
reduce_xor_p = _reduction("reduce_xor", _bitwise(np.bitwise_xor, _zero), INTEGRAL,
                          keep_weak=False)
for _prim in (reduce_and_p, reduce_or_p, reduce_xor_p):
    ad.defjvp_zero(_prim)


def _reduced_np(x: np.ndarray, axes: tuple) -> tuple:
    return tuple(s for i, s in enumerate(x.shape) if i not in axes)


def _arg_reduction(name: str, np_fn: Callable, method: Callable) -> Any:
    def abstract_eval(x: ShapedArray, *, axes: tuple, index_dtype: np.dtype) -> ShapedArray:
        check_kinds(name, (BOOL, INT, UINT, FLOAT), x)
        if len(axes) != 1:
            raise ValueError(f"{name} requires exactly one axis, got {axes}")
        if x.shape[axes[0]] == 0:
            raise ValueError(f"{name} with a zero-sized dimension")
        return ShapedArray(_reduced_shape(x, axes), index_dtype, False)

    def impl(x: np.ndarray, *, axes: tuple, index_dtype: np.dtype) -> np.ndarray:
        return np.asarray(np_fn(x, axis=axes[0]), index_dtype)

    def specialize(x: ShapedArray, *, axes: tuple, index_dtype: np.dtype) -> Callable:
        """impl for an ndarray operand (eager plans): `method`, the ndarray method np_fn
        calls, without np_fn's Python layers (1.3 of a 10-element argmax's 2.3 µs)."""
        axis = axes[0]
        return exact(lambda x: np.asarray(method(x, axis), index_dtype))

    prim = make_primitive(name, impl, abstract_eval)
    prim.specialize = specialize
    return prim


argmax_p = _arg_reduction("argmax", np.argmax, np.ndarray.argmax)
ad.defjvp_zero(argmax_p)
defreducer(argmax_p)
argmin_p = _arg_reduction("argmin", np.argmin, np.ndarray.argmin)
ad.defjvp_zero(argmin_p)
defreducer(argmin_p)
for _prim in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p, reduce_or_p,
              reduce_xor_p, argmax_p, argmin_p):  # (splits of the reduced axes drop out)
    _prim.sharding_rule = propagation.reduction


def _axes(axes: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(a) for a in axes)


def reduce_sum(operand: Any, axes: Sequence[int]) -> Any:
    return reduce_sum_p.bind(operand, axes=_axes(axes), out_sharding=None)


def reduce_prod(operand: Any, axes: Sequence[int]) -> Any:
    return reduce_prod_p.bind(operand, axes=_axes(axes))


def reduce_max(operand: Any, axes: Sequence[int]) -> Any:
    return reduce_max_p.bind(operand, axes=_axes(axes))


def reduce_min(operand: Any, axes: Sequence[int]) -> Any:
    return reduce_min_p.bind(operand, axes=_axes(axes))


def reduce_and(operand: Any, axes: Sequence[int]) -> Any:
    return reduce_and_p.bind(operand, axes=_axes(axes))


def reduce_or(operand: Any, axes: Sequence[int]) -> Any:
    return reduce_or_p.bind(operand, axes=_axes(axes))


def reduce_xor(operand: Any, axes: Sequence[int]) -> Any:
    return reduce_xor_p.bind(operand, axes=_axes(axes))


def argmax(operand: Any, axis: int, index_dtype: Any) -> Any:
    return argmax_p.bind(operand, axes=(int(axis),),
                         index_dtype=dtypes.check_user_dtype(index_dtype))


def argmin(operand: Any, axis: int, index_dtype: Any) -> Any:
    return argmin_p.bind(operand, axes=(int(axis),),
                         index_dtype=dtypes.check_user_dtype(index_dtype))


