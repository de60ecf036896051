"""jax.scipy.cluster.vq.vq: assign each observation to its nearest code-book entry."""
from __future__ import annotations

import operator
from typing import Any

import pyjax.numpy as jnp
from pyjax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from pyjax._src.transforms.batching import vmap


def vq(obs: Any, code_book: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """(code, dist): the index of the closest code (Euclidean) for each row of obs, and the
    distance to it; 1-D inputs are scalar features. `check_finite` is ignored, as in JAX."""
    del check_finite
    check_arraylike("scipy.cluster.vq.vq", obs, code_book)
    obs_arr, cb_arr = promote_dtypes_inexact(obs, code_book)
    if obs_arr.ndim != cb_arr.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs_arr.ndim == 1:
        obs_arr, cb_arr = obs_arr[..., None], cb_arr[..., None]
    if obs_arr.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    dist = vmap(lambda ob: jnp.linalg.norm(ob[None] - cb_arr, axis=-1))(obs_arr)
    code = jnp.argmin(dist, axis=-1)
    return code, vmap(operator.getitem)(dist, code)
