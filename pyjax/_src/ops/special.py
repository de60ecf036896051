"""logsumexp, shared by `jax.nn` and `jax.scipy.special` (JAX's jax/_src/ops/special.py):
the maximum is subtracted (outside differentiation) before exponentiating, so large inputs
neither overflow nor lose precision."""
from __future__ import annotations

from typing import Any

import numpy as np

import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.numpy.reductions import Axis, _reduction_dims
from pyjax._src.numpy.util import promote_args_inexact


def logsumexp(a: Any, axis: Axis = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:
    """log(sum(b * exp(a))) over `axis`; with return_sign, (log|sum|, sign(sum)); a negative
    sum gives NaN otherwise (real inputs)."""
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a_arr, b_arr = promote_args_inexact("logsumexp", a, b)
        a_arr = jnp.where(b_arr != 0, a_arr, -np.inf)
    else:
        a_arr, = promote_args_inexact("logsumexp", a)
    dims = _reduction_dims(a_arr, axis)
    amax = jnp.max(jnp.real(a_arr), axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
    amax = lax.stop_gradient(lax.select(jnp.isfinite(amax), amax, lax.full_like(amax, 0)))
    amax_with_dims = amax if keepdims else lax.expand_dims(amax, dims)
    exp_a = lax.exp(lax.sub(a_arr, amax_with_dims.astype(a_arr.dtype)))
    if b is not None:
        exp_a = lax.mul(exp_a, b_arr)
    sumexp = jnp.sum(exp_a, axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    is_complex = np.issubdtype(a_arr.dtype, np.complexfloating)
    if return_sign or not is_complex:
        sumexp = abs(sumexp)
    out = lax.add(lax.log(sumexp), amax.astype(sumexp.dtype))
    if return_sign:
        return out, sign
    if b is not None and not is_complex:
        out = jnp.where(sign < 0, jnp.array(np.nan, dtype=out.dtype), out)
    return out
