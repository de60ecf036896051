"""Fuzz: reshape, transpose, concatenate, stack, broadcast_to, squeeze and expand_dims over
every x32 dtype, empty and 0-d shapes, eagerly and under jit, against NumPy (values bit for bit;
mixed-dtype concatenation promotes as jnp.result_type, JAX's lattice, with x64 off)."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pyjax.numpy as jnp
from fuzz_strategies import X32, arrays, fuzz_settings, run_both, same_bits


def _agree(fn, np_fn, *args) -> None:
    """fn eagerly and under jit equals NumPy's np_fn exactly, or all three raise (JAX's
    classes: ValueError/TypeError)."""
    eager, jitted, e_err, j_err = run_both(fn, *args)
    try:
        want = np_fn(*args)
    except (ValueError, TypeError, IndexError, np.exceptions.AxisError) as e:
        # JAX raises NumPy's ValueError eagerly on NumPy inputs, lax's TypeError under jit
        assert isinstance(e_err, (ValueError, TypeError)) and isinstance(
            j_err, (ValueError, TypeError)), (e, e_err, j_err)
        return
    assert e_err is None and j_err is None, (e_err, j_err)
    want = np.asarray(want)
    assert np.dtype(eager.dtype) == want.dtype and eager.shape == want.shape, \
        (eager.dtype, want.dtype, eager.shape, want.shape)
    same_bits(eager, want)
    same_bits(eager, jitted)


@fuzz_settings(60)
@given(st.data())
def test_reshape_transpose_squeeze_expand(data):
    x = data.draw(arrays(data.draw(st.sampled_from(X32))))
    # reshape to a random factorisation of the size, one entry possibly -1
    n = x.size
    dims = data.draw(st.lists(st.integers(0, 4), max_size=3))
    if math.prod(dims) != n:
        dims = dims + [n // max(math.prod(dims), 1)] if math.prod(dims) else [n]
    if dims and data.draw(st.booleans()) and math.prod(dims) == n and n:
        dims[data.draw(st.integers(0, len(dims) - 1))] = -1
    _agree(lambda a: jnp.reshape(a, tuple(dims)), lambda a: np.reshape(a, tuple(dims)), x)
    perm = data.draw(st.permutations(range(x.ndim)))
    _agree(lambda a: jnp.transpose(a, perm), lambda a: np.transpose(a, perm), x)
    _agree(lambda a: jnp.transpose(a), np.transpose, x)
    axis = data.draw(st.integers(-x.ndim - 1, x.ndim))
    _agree(lambda a: jnp.expand_dims(a, axis), lambda a: np.expand_dims(a, axis), x)
    sq = data.draw(st.none() | st.integers(-x.ndim - 1, x.ndim))
    if x.ndim == 0 and sq is not None:  # KNOWN_DIFFERENCES['squeeze_0d_with_axis']
        _, _, e_err, j_err = run_both(lambda a: jnp.squeeze(a, sq), x)
        assert type(e_err) is ValueError and type(j_err) is ValueError, (e_err, j_err)
    else:
        _agree(lambda a: jnp.squeeze(a, sq), lambda a: np.squeeze(a, sq), x)


@fuzz_settings(60)
@given(st.data())
def test_concatenate_stack_broadcast(data):
    kind = data.draw(st.sampled_from(X32))
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=3))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    parts = []
    for _ in range(data.draw(st.integers(1, 3))):
        s = list(shape)
        s[axis] = data.draw(st.integers(0, 3))
        parts.append(data.draw(arrays(kind, tuple(s))))
    _agree(lambda *a: jnp.concatenate(a, axis=axis), lambda *a: np.concatenate(a, axis=axis),
           *parts)
    same = [data.draw(arrays(kind, shape)) for _ in range(len(parts))]
    stack_axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    _agree(lambda *a: jnp.stack(a, axis=stack_axis), lambda *a: np.stack(a, axis=stack_axis),
           *same)
    lead = tuple(data.draw(st.lists(st.integers(0, 3), max_size=2)))
    target = lead + tuple(data.draw(st.integers(0, 3)) if d == 1 else d for d in shape)
    _agree(lambda a: jnp.broadcast_to(a, target), lambda a: np.broadcast_to(a, target),
           same[0])
    # a second dtype promotes as JAX's lattice says
    other = data.draw(st.sampled_from(X32))
    mixed = [same[0], data.draw(arrays(other, shape))]
    eager, jitted, e_err, j_err = run_both(lambda a, b: jnp.concatenate([a, b], axis=axis),
                                           *mixed)
    assert e_err is None and j_err is None, (e_err, j_err)
    assert eager.dtype == jnp.result_type(*mixed) and not eager.weak_type
    same_bits(eager, jitted)
    with np.errstate(all="ignore"):
        want = np.concatenate([m.astype(eager.dtype) for m in mixed], axis=axis)
    same_bits(eager, want)
