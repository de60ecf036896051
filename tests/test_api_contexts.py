"""Top-level context managers and helpers: config states (enable_x64, numpy_rank_promotion...),
disable_jit, ensure_compile_time_eval, typeof, clear_caches, closure_convert.  Expected texts and
values are JAX 0.10.2's."""
import warnings

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src.core.trace import Tracer

RANK_URL = "https://docs.jax.dev/en/latest/rank_promotion_warning.html."


def test_config_states_set_and_restore():
    assert jax.enable_x64.value is False
    with jax.enable_x64():
        assert jnp.array(1.0).dtype == np.float64 and jax.config.jax_enable_x64
    assert jnp.array(1.0).dtype == np.float32

    @jax.enable_x64(True)
    def make():
        return jnp.array(1.0).dtype
    assert make() == np.float64 and not jax.enable_x64.value
    with pytest.raises(TypeError, match="did you mean to use 'State.value' instead"):
        bool(jax.enable_x64)
    with pytest.raises(TypeError, match="Context manager for numpy_rank_promotion config option "
                                        "requires an argument"):
        jax.numpy_rank_promotion()
    with pytest.raises(ValueError, match=r"new enum value must be in \['allow', 'warn', "
                                         r"'raise'\], got bogus of type <class 'str'>."):
        jax.config.update("jax_numpy_rank_promotion", "bogus")


def test_numpy_rank_promotion_raise_and_warn():
    x, y = jnp.ones(3), jnp.ones((2, 3))
    with jax.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError) as info:
            x + y
        assert str(info.value) == (
            "Operands could not be broadcast together for add on shapes (3,) (2, 3) and with the "
            "config option jax_numpy_rank_promotion='raise'. For more information, see "
            + RANK_URL)
        assert (x + 1.0).shape == (3,)  # scalars are not rank promotion
    with jax.numpy_rank_promotion("warn"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert (x + y).shape == (2, 3)
        assert [str(w.message) for w in caught] == [
            "Following NumPy automatic rank promotion for add on shapes (3,) (2, 3). Set the "
            "jax_numpy_rank_promotion config option to 'allow' to disable this warning; for more "
            "information, see " + RANK_URL]
    assert jax.numpy_rank_promotion.value == "allow"


def test_disable_jit_runs_the_function_eagerly():
    seen = []

    @jax.jit
    def f(x):
        seen.append(isinstance(x, Tracer))
        return x * 2
    with jax.disable_jit():
        np.testing.assert_array_equal(f(jnp.arange(3)), [0, 2, 4])
    assert seen == [False]
    f(jnp.arange(3))
    assert seen == [False, True]


def test_ensure_compile_time_eval_gives_concrete_values_under_jit():
    @jax.jit
    def f(x):
        with jax.ensure_compile_time_eval():
            y = jnp.sin(3.0)
            positive = jnp.sin(y) > 0
            w = y * x  # involves a tracer: staged as usual
        return jnp.sin(x) + w if positive else jnp.cos(x)
    assert float(f(2.0)) == pytest.approx(1.1915374, rel=1e-6)


def test_typeof():
    assert str(jax.typeof(jnp.ones(3))) == "float32[3]"
    assert str(jax.typeof(1.0)) == "~float32[]"
    assert repr(jax.typeof(2)) == "ShapedArray(int32[], weak_type=True)"
    with pytest.raises(TypeError, match=r"Argument '\[1\]' of type '<class 'list'>' is not a "
                                        "valid JAX type"):
        jax.typeof([1])


def test_clear_caches_forgets_traces():
    traces = []

    @jax.jit
    def f(x):
        traces.append(1)
        return x + 1
    f(1.0)
    f(2.0)
    jax.clear_caches()
    f(3.0)
    assert len(traces) == 2


def test_closure_convert_hoists_values_a_derivative_flows_through():
    def outer(x):
        def inner(y):
            return jnp.sin(x) * y + 2.0 * jnp.ones(2)
        converted, consts = jax.closure_convert(inner, 1.0)
        assert len(consts) == (1 if isinstance(x, Tracer) else 0)
        return converted(3.0, *consts)
    np.testing.assert_allclose(outer(jnp.ones(2)), [4.524413] * 2, rtol=1e-6)
    np.testing.assert_allclose(jax.grad(lambda x: outer(x).sum())(jnp.ones(2)),
                               [1.6209068] * 2, rtol=1e-6)
    converted, consts = jax.closure_convert(lambda a, b: (a * 2, b["k"]), 1.0, {"k": 2.0})
    assert consts == [] and [float(v) for v in converted(1.0, {"k": 5.0})] == [2.0, 5.0]
    with pytest.raises(TypeError, match="must have the same Pytree structure as the example "
                                        "arguments"):
        converted(1.0, 5.0)
