"""Eager plans (pyjax/_src/backend/eager_plans.py): an eager jnp call is recorded on its second
call with a signature and replayed from the third.  A replay must give what the function
computes, for any values of the same types; calls that depend on values, warn, or cannot be
replayed must stay unplanned."""
import inspect
import threading
import warnings

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.backend import eager_plans
from pyjax._src.errors import ConcretizationTypeError

RNG = np.random.default_rng(0)


def _arrays(shape=(3, 4), dtype=np.float32, n=4):
    return [RNG.normal(size=shape).astype(dtype) for _ in range(n)]


def _plan_of(fun):
    """The plans recorded for `fun` (the undecorated function)."""
    target = inspect.unwrap(fun)
    return [p for k, p in eager_plans._plans.items() if k[0] is target]


# (jnp call, NumPy reference) on operands of one type and changing values
CASES = {
    "sum": (lambda x, y: jnp.sum(x), lambda x, y: np.sum(x)),
    "sum_axis_keepdims": (lambda x, y: jnp.sum(x, axis=1, keepdims=True),
                          lambda x, y: np.sum(x, axis=1, keepdims=True)),
    "mean": (lambda x, y: jnp.mean(x, axis=0), lambda x, y: np.mean(x, axis=0)),
    "max": (lambda x, y: jnp.max(x), lambda x, y: np.max(x)),
    "argmax": (lambda x, y: jnp.argmax(x), lambda x, y: np.argmax(x)),
    "argmin_axis": (lambda x, y: jnp.argmin(x, axis=1), lambda x, y: np.argmin(x, axis=1)),
    "any": (lambda x, y: jnp.any(x > 0, axis=0), lambda x, y: np.any(x > 0, axis=0)),
    "where": (lambda x, y: jnp.where(x > 0, x, y), lambda x, y: np.where(x > 0, x, y)),
    "clip": (lambda x, y: jnp.clip(x, -0.5, 0.5), lambda x, y: np.clip(x, -0.5, 0.5)),
    "signbit": (lambda x, y: jnp.signbit(x), lambda x, y: np.signbit(x)),
    "copysign": (lambda x, y: jnp.copysign(x, y), lambda x, y: np.copysign(x, y)),
    "var": (lambda x, y: jnp.var(x, axis=1), lambda x, y: np.var(x, axis=1)),
    "dot": (lambda x, y: jnp.dot(x, y.T), lambda x, y: np.dot(x, y.T)),
    "matmul": (lambda x, y: jnp.matmul(x.T, y), lambda x, y: np.matmul(x.T, y)),
    "einsum": (lambda x, y: jnp.einsum("ij,kj->ik", x, y),
               lambda x, y: np.einsum("ij,kj->ik", x, y)),
    "concatenate": (lambda x, y: jnp.concatenate([x, y], axis=1),
                    lambda x, y: np.concatenate([x, y], axis=1)),
    "stack": (lambda x, y: jnp.stack([x, y]), lambda x, y: np.stack([x, y])),
    "reshape": (lambda x, y: jnp.reshape(x, (-1, 2)), lambda x, y: np.reshape(x, (-1, 2))),
    "transpose": (lambda x, y: jnp.transpose(x), lambda x, y: np.transpose(x)),
    "astype": (lambda x, y: x.astype(jnp.int32), lambda x, y: x.astype(np.int32)),
    "divmod": (lambda x, y: jnp.divmod(x, y), lambda x, y: np.divmod(x, y)),
    "cumsum": (lambda x, y: jnp.cumsum(x, axis=0), lambda x, y: np.cumsum(x, axis=0)),
    # custom_jvp functions run their function, as eagerly
    "softmax": (lambda x, y: pyjax.nn.softmax(x), lambda x, y: np.exp(x - x.max(-1, keepdims=True))
                / np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)),
    "relu": (lambda x, y: pyjax.nn.relu(x), lambda x, y: np.maximum(x, 0)),
    "zeros_like": (lambda x, y: jnp.zeros_like(x) + x, lambda x, y: x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_replays_follow_the_values(name):
    """The signbit defect: a result computed outside the recorded primitives must not be
    replayed as a constant.  Each call has new values of the same types."""
    fn, ref = CASES[name]
    pairs = list(zip(_arrays(), _arrays()[::-1]))
    for x, y in pairs + pairs:
        got = fn(jnp.asarray(x), jnp.asarray(y))
        want = ref(x, y)
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(np.asarray(g), w, rtol=2e-6, atol=2e-6)


def test_scatter_replays_follow_the_indices():
    x = jnp.asarray(np.zeros(6, np.float32))
    for rows in ([0, 3, 5], [1, 1, 2], [5, -1, 0], [2, 2, 2]) * 2:
        idx = jnp.asarray(np.array(rows, np.int32))
        want = np.zeros(6, np.float32)
        np.add.at(want, np.array(rows), 1.0)
        np.testing.assert_array_equal(np.asarray(x.at[idx].add(1.0)), want)
        want = np.zeros(6, np.float32)
        want[np.array(rows)] = 2.0
        np.testing.assert_array_equal(np.asarray(x.at[idx].set(2.0)), want)


def test_plans_without_operands_return_new_arrays():
    """Creation functions are planned too (their result is a constant of the signature); each
    call still returns a new Array, and config changes what they make."""
    for _ in range(3):
        a, b = jnp.linspace(0, 1, 5), jnp.linspace(0, 1, 5)
        assert a is not b and a.tolist() == [0, 0.25, 0.5, 0.75, 1] and a.dtype == np.float32
        assert jnp.zeros((2, 3)).shape == (2, 3) and jnp.arange(4).dtype == np.int32
        with pyjax.enable_x64(True):
            assert jnp.arange(4).dtype == np.int64 and jnp.zeros(2).dtype == np.float64
    assert any(callable(p) for p in _plan_of(jnp.linspace))
    assert jnp.eye(3, k=1).tolist() == np.eye(3, k=1).tolist()
    assert jnp.eye(3, k=-1).tolist() == np.eye(3, k=-1).tolist()


def test_plans_do_not_pin_big_constants():
    """A plan keeps its constants alive as long as the cache: calls that would keep more
    than MAX_HELD_BYTES stay unplanned (a broadcast counts its source only)."""
    pyjax.clear_caches()
    for _ in range(3):
        assert jnp.eye(1024).shape == (1024, 1024)  # 4 MiB of constant result
        assert jnp.zeros((1024, 1024)).shape == (1024, 1024)  # a broadcast of one zero
    assert _plan_of(jnp.eye) == [None]
    assert any(callable(p) for p in _plan_of(jnp.zeros))


def test_plans_are_recorded_on_the_second_call_and_keep_types():
    x = jnp.asarray(_arrays()[0])
    pyjax.clear_caches()
    first = [jnp.sum(x * 1, axis=0) for _ in range(3)]
    assert any(callable(p) for p in _plan_of(jnp.sum))
    for r in first:
        assert type(r) is type(first[0]) and r.dtype == np.float32 and not r.weak_type
    weak = jnp.asarray(2.0)  # weak results stay weak through the plan (as in JAX)
    results = [jnp.clip(weak, 0.0, 1.0) for _ in range(3)] + [
        jnp.where(weak > 1, weak, 0.0) for _ in range(3)]
    assert all(r.weak_type for r in results)
    assert not any(jnp.sum(weak).weak_type for _ in range(3))


def test_python_scalar_statics_key_by_type_and_sign():
    c = jnp.asarray(np.array([True, False]))
    x = jnp.asarray(np.array([1.0, 1.0], np.float32))
    for _ in range(3):
        assert np.signbit(np.asarray(jnp.where(c, x, -0.0)))[1]
        assert not np.signbit(np.asarray(jnp.where(c, x, 0.0)))[1]
    i = jnp.asarray(np.array([1, 2], np.int32))
    for _ in range(3):
        assert jnp.where(i > 1, i, 0).dtype == np.int32
        assert jnp.where(i > 1, i, 0.5).dtype == np.float32


def test_an_array_passed_twice_has_its_own_plan():
    x, y = (jnp.asarray(a) for a in _arrays(n=2))
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(jnp.dot(x, x.T)), np.dot(x, x.T), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(jnp.dot(x, y.T)), np.dot(x, y.T), rtol=1e-6)
    a = jnp.asarray(np.arange(3.0, dtype=np.float32))
    b = jnp.asarray(np.ones(3, np.float32))
    for _ in range(3):
        assert jnp.concatenate([a, a]).tolist() == [0, 1, 2, 0, 1, 2]
        assert jnp.concatenate([a, b]).tolist() == [0, 1, 2, 1, 1, 1]


def test_value_dependent_functions_stay_unplanned():
    """A function that needs an operand's value cannot be replayed: it raises under the
    recorder, so it runs as usual every time."""
    @eager_plans.planned
    def take_first_n(x):
        return jnp.sum(x[:int(x[0])])

    for values in ([2.0, 1.0, 1.0, 1.0], [3.0, 1.0, 1.0, 1.0], [1.0, 5.0, 5.0, 5.0]) * 2:
        x = jnp.asarray(np.array(values, np.float32))
        assert float(take_first_n(x)) == sum(values[:int(values[0])])
    assert _plan_of(take_first_n) == [None]

    @eager_plans.planned
    def needs_value(x):
        if x.sum() > 0:  # bool() of an operand: a ConcretizationTypeError under jit
            return x
        return -x
    for v in (1.0, -1.0, 2.0, -2.0):
        assert float(needs_value(jnp.asarray(np.float32(v)))) == abs(v)
    with pytest.raises(ConcretizationTypeError):
        pyjax.jit(needs_value)(jnp.asarray(np.float32(1.0)))


def test_errors_are_the_functions_own():
    x = jnp.asarray(np.ones((2, 3), np.float32))
    for _ in range(3):
        with pytest.raises(ValueError, match="axis 5 is out of bounds"):
            jnp.sum(x, axis=5)
        with pytest.raises(TypeError):
            jnp.reshape(x, (4, 4))


def test_warnings_repeat_on_every_call():
    x = jnp.asarray(np.ones(3, np.float32))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(4):
            x.astype(jnp.float64)
    assert sum("float64" in str(w.message) for w in caught) == 4


def test_config_is_part_of_the_key():
    i = jnp.asarray(np.arange(4, dtype=np.int32))
    for _ in range(3):
        assert jnp.sum(i).dtype == np.int32
        with pyjax.enable_x64(True):
            assert jnp.sum(i).dtype == np.int64
    f, g = jnp.asarray(np.arange(4.0, dtype=np.float32)), jnp.ones((2, 4))
    with pyjax.numpy_rank_promotion("raise"):
        for _ in range(3):
            with pytest.raises(ValueError, match="rank_promotion='raise'"):
                jnp.copysign(f, g)
    for _ in range(3):
        assert jnp.copysign(f, g).shape == (2, 4)


def test_outputs_that_are_operands_or_constants():
    x = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    for _ in range(3):
        assert jnp.reshape(x, (2, 3)) is x  # no equation, the operand itself
        assert jnp.squeeze(x) is x


def test_threads_share_plans_safely():
    shapes = [(n,) for n in range(1, 9)]
    data = {s: RNG.normal(size=s).astype(np.float32) for s in shapes}
    errors = []

    def work(k):
        try:
            for rep in range(30):
                for s in shapes:
                    v = data[s] * (k + 1)
                    got = jnp.where(jnp.asarray(v) > 0, jnp.sum(jnp.asarray(v)), 0.0)
                    want = np.where(v > 0, np.sum(v), 0.0)
                    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_clear_caches_drops_plans():
    x = jnp.asarray(np.ones(3, np.float32))
    for _ in range(3):
        jnp.sum(x)
    assert _plan_of(jnp.sum)
    pyjax.clear_caches()
    assert not _plan_of(jnp.sum)


def test_traced_calls_do_not_use_plans():
    """Under jit the functions stage as before (the jaxpr is JAX's)."""
    x = jnp.asarray(np.ones(3, np.float32))
    for _ in range(3):
        jnp.where(x > 0, x, 0.0)
    text = str(pyjax.make_jaxpr(lambda v: jnp.where(v > 0, v, 0.0))(x))
    assert "name=_where" in text
