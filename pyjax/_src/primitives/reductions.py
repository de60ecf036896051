"""Reduction primitives over static axes: sum, max, min, prod, and, or, xor, argmax, argmin."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import pp_eqn_standard
from pyjax._src.primitives._rules import (
    ANY, BOOL, FLOAT, INT, INTEGRAL, NUMBER, UINT, check_kinds, make_primitive)


def _reduced_shape(x: ShapedArray, axes: tuple) -> tuple:
    for a in axes:
        if not 0 <= a < x.ndim:
            raise ValueError(f"reduction axes {axes} out of range for operand of shape {x.shape}")
    return tuple(s for i, s in enumerate(x.shape) if i not in axes)


def _reduction(name: str, impl: Callable, kinds: tuple, *, out_sharding: bool = False,
               keep_weak: bool = True) -> Any:
    def abstract_eval(x: ShapedArray, *, axes: tuple, out_sharding: Any = None) -> ShapedArray:
        check_kinds(name, kinds, x)
        # JAX keeps the weak type, except for the bitwise reductions (reduce_and/or/xor)
        return ShapedArray(_reduced_shape(x, axes), x.dtype, x.weak_type and keep_weak)

    def run(x: np.ndarray, *, axes: tuple, out_sharding: Any = None) -> np.ndarray:
        if x.dtype == dtypes.bfloat16:  # ml_dtypes warns on NaN; XLA is silent
            with np.errstate(invalid="ignore"):
                return np.asarray(impl(x, axes), dtype=x.dtype)
        return np.asarray(impl(x, axes), dtype=x.dtype)

    prim = make_primitive(name, run, abstract_eval)
    if not out_sharding:
        prim.pp_rule = lambda eqn, ctx: pp_eqn_standard(eqn, ctx, ["axes"])
    return prim


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


def _accumulating(np_fn: Callable) -> Callable:
    """Sum or product in the input dtype, except half-precision floats, which XLA accumulates
    in float32 (a bfloat16 sum of 1000 ones is 1000, not 256)."""
    def fn(x: np.ndarray, axes: tuple) -> np.ndarray:
        if x.dtype in (dtypes.float16, dtypes.bfloat16):
            return np_fn(x, axis=axes, dtype=np.float32).astype(x.dtype)
        return np_fn(x, axis=axes, dtype=x.dtype)
    return fn


reduce_sum_p = _reduction("reduce_sum", _accumulating(np.sum), NUMBER, out_sharding=True)
reduce_prod_p = _reduction("reduce_prod", _accumulating(np.prod), NUMBER)
reduce_max_p = _reduction("reduce_max",
                          lambda x, axes: np.max(x, axis=axes, initial=_lowest(x.dtype)), ANY)
reduce_min_p = _reduction("reduce_min",
                          lambda x, axes: np.min(x, axis=axes, initial=_highest(x.dtype)), ANY)
def _all_ones(dtype: np.dtype) -> Any:
    return np.asarray(True if dtype == dtypes.bool_ else -1).astype(dtype)[()]


reduce_and_p = _reduction("reduce_and",
                          lambda x, axes: np.bitwise_and.reduce(x, axis=axes) if x.size
                          else np.full(_reduced_np(x, axes), _all_ones(x.dtype), x.dtype),
                          INTEGRAL, keep_weak=False)
reduce_or_p = _reduction("reduce_or",
                         lambda x, axes: np.bitwise_or.reduce(x, axis=axes) if x.size
                         else np.zeros(_reduced_np(x, axes), x.dtype), INTEGRAL,
                         keep_weak=False)
reduce_xor_p = _reduction("reduce_xor",
                          lambda x, axes: np.bitwise_xor.reduce(x, axis=axes) if x.size
                          else np.zeros(_reduced_np(x, axes), x.dtype), INTEGRAL,
                          keep_weak=False)


def _reduced_np(x: np.ndarray, axes: tuple) -> tuple:
    return tuple(s for i, s in enumerate(x.shape) if i not in axes)


def _arg_reduction(name: str, np_fn: Callable) -> Any:
    def abstract_eval(x: ShapedArray, *, axes: tuple, index_dtype: np.dtype) -> ShapedArray:
        check_kinds(name, (BOOL, INT, UINT, FLOAT), x)
        if len(axes) != 1:
            raise ValueError(f"{name} requires exactly one axis, got {axes}")
        if x.shape[axes[0]] == 0:
            raise ValueError(f"{name} with a zero-sized dimension")
        return ShapedArray(_reduced_shape(x, axes), index_dtype, False)

    def impl(x: np.ndarray, *, axes: tuple, index_dtype: np.dtype) -> np.ndarray:
        return np.asarray(np_fn(x, axis=axes[0]), index_dtype)

    return make_primitive(name, impl, abstract_eval)


argmax_p = _arg_reduction("argmax", np.argmax)
argmin_p = _arg_reduction("argmin", np.argmin)


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


