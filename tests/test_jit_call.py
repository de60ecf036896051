"""jit's cached call: the common call's short path (transforms/jit.py `_call_arrays`, the
generated caller of backend/caller.py) and tier 0's specialised impls (backend/specialized.py)
give what the general path and the impls give."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.backend import tier0
from pyjax._src.core.array import ArrayImpl

RNG = np.random.default_rng(14)
#: values that take a kernel's special paths: signed zeros, infinities, NaN, subnormals, values
#: whose products overflow float32
_SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3e38, -3e38, 1.5, -2.5,
                     7.0], np.float64)

PROGRAMS = {
    "add_literal": (lambda x, y: x + 1, 2),
    "fma_literals": (lambda x, y: x * 2 + 1, 2),
    "fma_arrays": (lambda x, y: x * y + y, 2),
    "fms": (lambda x, y: x - y * x, 2),
    "max_mul": (lambda x, y: jnp.maximum(x, y) * y, 2),
    "min_zero": (lambda x, y: jnp.minimum(x, 0.0), 2),
    "sum_of_product": (lambda x, y: jnp.sum(x * y), 2),
    "mean": (lambda x, y: jnp.mean(x), 2),
    "where": (lambda x, y: jnp.where(x > y, x, y), 2),
    "divide": (lambda x, y: x / y, 2),
    "square_tan": (lambda x, y: jnp.square(x) + jnp.tan(y), 2),
    "to_int": (lambda x, y: (x * 100).astype(jnp.int32), 2),
    "outer": (lambda x, y: x[:, None] * y[None, :], 2),
    "sum_of_broadcast": (lambda x, y: jnp.sum(jnp.broadcast_to(x[0], (3, 4)), axis=0), 2),
    "two_outputs": (lambda x, y: {"s": x + y, "p": (x * y,)}, 2),
}


def _operands(dtype: np.dtype, shape: tuple) -> tuple:
    size = int(np.prod(shape))
    with np.errstate(all="ignore"):
        x = np.resize(_SPECIAL, size).astype(dtype).reshape(shape)
        y = RNG.standard_normal(size).astype(dtype).reshape(shape)
    return x, y


def _results(fn, args, specialised: bool, monkeypatch) -> list:
    pyjax.clear_caches()
    with monkeypatch.context() as m:
        if not specialised:
            m.setattr(tier0, "_specials", lambda steps: {})
        f = pyjax.jit(fn)
        f(*args)
        out = f(*args)  # (the cached call)
    pyjax.clear_caches()
    return pyjax.tree.leaves(out)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "complex64"])
@pytest.mark.parametrize("shape", [(), (7,)])
def test_specialised_tier0_has_the_impls_bits(name, dtype, shape, monkeypatch):
    fn, _ = PROGRAMS[name]
    if shape == () and name in ("outer", "sum_of_broadcast"):
        pytest.skip("needs an axis")
    if dtype in ("int32", "complex64") and name in ("where", "max_mul", "min_zero", "to_int",
                                                     "square_tan", "divide"):
        pytest.skip("not defined or not interesting for this dtype")
    dtype = jnp.dtype(dtype)
    args = tuple(jnp.asarray(a) for a in _operands(dtype, shape))
    expected = _results(fn, args, False, monkeypatch)
    got = _results(fn, args, True, monkeypatch)
    for e, g in zip(expected, got):
        assert isinstance(g, ArrayImpl) and g.dtype == e.dtype and g.weak_type == e.weak_type
        np.testing.assert_array_equal(np.asarray(g).reshape(-1).view(np.uint8),
                                      np.asarray(e).reshape(-1).view(np.uint8))


def test_specialised_tier0_in_float64(monkeypatch):
    with pyjax.enable_x64(True):
        for name in ("fma_arrays", "sum_of_product", "max_mul", "divide"):
            fn, _ = PROGRAMS[name]
            args = tuple(jnp.asarray(a) for a in _operands(np.dtype(np.float64), (5,)))
            for e, g in zip(_results(fn, args, False, monkeypatch),
                            _results(fn, args, True, monkeypatch)):
                np.testing.assert_array_equal(np.asarray(g), np.asarray(e))


def test_specialised_impls_take_numpy_scalars_from_a_loop(monkeypatch):
    """A loop's carry of rank 0 may come back from an impl as a NumPy scalar: the body's run
    function makes it an ndarray before a specialised impl reads it."""
    def loop(x, y):
        return lax.fori_loop(0, 5, lambda i, c: (c[0] * 1.5 + c[1], jnp.maximum(c[1], c[0])),
                             (x, y))
    args = (jnp.float32(0.25), jnp.float32(-3.0))
    for e, g in zip(_results(loop, args, False, monkeypatch),
                    _results(loop, args, True, monkeypatch)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1 << 15)  # (PYJAX_TIER1=force: no inline line)
    run = pyjax.jit(lambda c, d: c * 1.5 + d).lower(*args).compile()
    assert "ndarray" in run.as_text()  # rank-0 inputs read by a specialised impl are checked


def test_common_call_matches_the_general_path():
    """Arrays, NumPy arrays and Python scalars of one signature share a trace; the short path
    (all Arrays) gives Arrays of the output avals' dtypes and weak types in the output tree."""
    traces = []

    def f(x, y):
        traces.append(1)
        return {"a": x * y, "b": [x + 1, y]}
    g = pyjax.jit(f)
    x = jnp.arange(4.0)
    y = jnp.asarray(np.float32(2.0))
    first = g(x, y)
    again = g(x, y)
    from_numpy = g(np.arange(4.0, dtype=np.float32), np.float32(2.0) * np.ones((), np.float32))
    assert len(traces) == 1
    for out in (first, again, from_numpy):
        assert type(out) is dict and type(out["b"]) is list
        np.testing.assert_array_equal(out["a"], np.arange(4.0) * 2)
        assert out["b"][1] is not y and out["b"][1].dtype == np.float32
    weak = pyjax.jit(lambda s: s * 2)
    assert weak(2.0).weak_type and weak(jnp.float32(2.0)).weak_type is False
    assert weak(weak(2.0)).weak_type  # a weak Array keeps its own trace


def test_common_call_respects_thread_options():
    calls = []

    def f(x):
        calls.append(1)
        return x + 1
    g = pyjax.jit(f)
    x = jnp.ones(3)
    g(x)
    g(x)
    assert len(calls) == 1
    with pyjax.disable_jit():
        g(x)
    assert len(calls) == 2
    with pyjax.enable_x64(True):
        assert g(x).dtype == np.float32
    pyjax.clear_caches()
    g(x)
    assert len(calls) == 4  # traced under x64 (a new key), then after the caches emptied


def test_common_call_places_results_of_sharded_arguments():
    from pyjax.sharding import Mesh, NamedSharding, PartitionSpec
    mesh = Mesh(np.array(pyjax.devices()[:1]), ("i",))
    f = pyjax.jit(lambda x: x * 2)
    x = jnp.arange(4.0)
    f(x)
    sharded = pyjax.device_put(x, NamedSharding(mesh, PartitionSpec("i")))
    out = f(sharded)
    assert isinstance(out.sharding, NamedSharding)
    np.testing.assert_array_equal(out, np.arange(4.0) * 2)
