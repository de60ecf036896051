"""The miscellaneous lax names: enums and precision, dot params, top_k/approx_top_k, lax.reduce,
rng_bit_generator/rng_uniform, optimization_barrier, tokens, dce_sink, composite, stage and the
small helpers.

(1) make_jaxpr prints what JAX 0.10.2 printed (x64 off and on), or raises its error, for the
    programs of tests/oracle/record_lax_misc.py (recorded into tests/data/lax_misc_jaxprs.json);
(2) values JAX computed there: rng bits (bit-exact), top_k orders, generic reductions;
(3) properties: generic reduce against NumPy for associative computations, vmap equals a
    loop, derivatives against finite differences, enum behaviour.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax

from op_table import x64_mode
from recorded import by_name, check_jaxpr, load

from record_lax_misc import lax_misc_cases, lax_misc_values

DATA = load("lax_misc_jaxprs.json")
RECORDS = by_name(DATA["records"])
VALUES = by_name(DATA["values"])
NAMES = [name for name, _, _ in lax_misc_cases(jax, jnp, lax, np)]
VALUE_NAMES = [name for name, _ in lax_misc_values(jax, jnp, lax, np)]

def _param(name: str, x64: bool) -> Any:
    return pytest.param(name, x64, id=f"{name}{'-x64' if x64 else ''}")


# ---------------------------------------------------------------------------------------------
# (1) jaxprs and errors identical to JAX's
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,use_x64", [_param(n, x64) for x64 in (False, True)
                                           for n in NAMES])
def test_jaxpr_matches_jax(name: str, use_x64: bool) -> None:
    record = RECORDS[(name, use_x64)]
    with x64_mode(use_x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn, args = {n: (f, a) for n, f, a in lax_misc_cases(jax, jnp, lax, np)}[name]
        check_jaxpr(fn, args, record)


# ---------------------------------------------------------------------------------------------
# (2) values identical to JAX's
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,use_x64", [
    pytest.param(n, x64, id=f"{n}{'-x64' if x64 else ''}") for x64 in (False, True)
    for n in VALUE_NAMES])
def test_values_match_jax(name: str, use_x64: bool) -> None:
    with x64_mode(use_x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        thunk = dict(lax_misc_values(jax, jnp, lax, np))[name]
        out = thunk()
    outs = out if isinstance(out, (list, tuple)) else [out]
    want = VALUES[(name, use_x64)]["outputs"]
    assert len(outs) == len(want)
    for got, rec in zip(outs, want):
        got = np.asarray(got)
        assert got.dtype.name == rec["dtype"] and list(got.shape) == rec["shape"]
        np.testing.assert_array_equal(got.ravel(), np.array(rec["value"], got.dtype))


# ---------------------------------------------------------------------------------------------
# (3) properties
# ---------------------------------------------------------------------------------------------

def _matmul2(a: Any, b: Any) -> tuple:
    return (a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
            a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3])


@pytest.mark.parametrize("size", [0, 1, 2, 5, 8, 13])
def test_generic_reduce_keeps_the_order_of_an_associative_computation(size: int) -> None:
    """A non-commutative computation (2x2 integer matrix products, exact with wrap-around)
    reduces in operand order, also along a middle axis with kept axes around it."""
    rng = np.random.default_rng(size)
    mats = rng.integers(-3, 4, size=(4, 3, size, 2)).astype(np.int32)
    out = lax.reduce(tuple(mats), tuple(np.array(v, np.int32) for v in (1, 0, 0, 1)),
                     _matmul2, (1,))
    for i in range(3):
        for j in range(2):
            want = np.eye(2, dtype=np.int32)
            for k in range(size):
                want = want @ mats[:, i, k, j].reshape(2, 2)
            np.testing.assert_array_equal([int(o[i, j]) for o in out], want.ravel())


def test_generic_reduce_applies_the_init_once_and_handles_empty_axes() -> None:
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(lax.reduce(x, np.float32(2), lambda a, b: a * b, (1,)),
                                  [12.0, 240.0])
    empty = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(lax.reduce(empty, np.float32(5), lambda a, b: a + b, (0,)),
                                  [5.0, 5.0, 5.0])
    np.testing.assert_array_equal(
        jax.jit(lambda v: lax.reduce(v, np.float32(1), lambda a, b: a * b, (0, 1)))(x), 720.0)


def test_generic_reduce_with_a_non_elementwise_computation() -> None:
    """The computation runs vmapped, so it may use any primitive on its scalars."""
    def comp(a: Any, b: Any) -> Any:
        return lax.reduce_max(lax.stack([a, b]), (0,))
    x = np.random.default_rng(0).normal(size=(4, 7)).astype(np.float32)
    np.testing.assert_array_equal(lax.reduce(x, np.float32(-np.inf), comp, (1,)),
                                  x.max(axis=1))


def test_monoid_reduce_binds_the_named_reduction() -> None:
    x = np.ones((2, 3), np.float32)
    for comp, init, prim in ((lax.add, 0.0, "reduce_sum"), (lax.mul, 1.0, "reduce_prod"),
                             (lax.max, -np.inf, "reduce_max"), (lax.min, np.inf, "reduce_min")):
        jaxpr = jax.make_jaxpr(lambda v: lax.reduce(v, init, comp, (0,)))(x)
        assert [e.primitive.name for e in jaxpr.eqns] == [prim]
    jaxpr = jax.make_jaxpr(lambda v: lax.reduce(v, -1, lax.bitwise_and, (0,)))(
        np.ones(3, np.int32))
    assert [e.primitive.name for e in jaxpr.eqns] == ["reduce_and"]


def _loop(fn: Any, *xs: np.ndarray) -> list:
    outs = [fn(*[x[i] for x in xs]) for i in range(xs[0].shape[0])]
    outs = [o if isinstance(o, (list, tuple)) else [o] for o in outs]
    return [np.stack([np.asarray(o[k]) for o in outs]) for k in range(len(outs[0]))]


@pytest.mark.parametrize("fn", [
    lambda x: lax.top_k(x, 2),
    lambda x: lax.top_k(x, 2, axis=0),
    lambda x: lax.approx_max_k(x, 2, reduction_dimension=0),
    lambda x: lax.approx_min_k(x, 3),
    lambda x: lax.reduce((x, x), (np.float32(1), np.float32(0)),
                         lambda a, b: (a[0] * b[0], a[1] + b[1]), (1,)),
    lambda x: lax.optimization_barrier((x, x * 2)),
    lambda x: [lax.stage(x)],
], ids=["top_k", "top_k_axis0", "approx_max_k", "approx_min_k", "reduce", "barrier", "stage"])
@pytest.mark.parametrize("in_axis", [0, 1])
def test_vmap_equals_loop(fn: Any, in_axis: int) -> None:
    x = np.random.default_rng(1).normal(size=(3, 4, 5)).astype(np.float32)
    got = jax.vmap(fn, in_axes=in_axis)(x)
    got = got if isinstance(got, (list, tuple)) else [got]
    want = _loop(fn, np.moveaxis(x, in_axis, 0))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6)


def test_vmap_of_rng_bit_generator_draws_from_the_first_key() -> None:
    keys = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.uint32)
    new_keys, bits = jax.vmap(lambda k: lax.rng_bit_generator(k, (3,)))(keys)
    first_key, first_bits = lax.rng_bit_generator(keys[0], (2, 3))
    np.testing.assert_array_equal(bits, first_bits)
    np.testing.assert_array_equal(new_keys, [np.asarray(first_key), keys[1]])


def test_rng_bit_generator_is_deterministic_and_advances() -> None:
    key = np.array([9, 8, 7, 6], np.uint32)
    k1, b1 = lax.rng_bit_generator(key, (4, 4))
    k2, b2 = jax.jit(lambda k: lax.rng_bit_generator(k, (4, 4)))(key)
    np.testing.assert_array_equal(b1, b2)
    np.testing.assert_array_equal(k1, k2)
    _, b3 = lax.rng_bit_generator(k1, (4, 4))
    assert not np.array_equal(b1, b3)


def test_rng_uniform_range_and_dtype() -> None:
    out = lax.rng_uniform(np.float32(-2), np.float32(3), (1000,))
    assert out.dtype == np.float32 and out.shape == (1000,)
    assert float(out.min()) >= -2.0 and float(out.max()) < 3.0
    ints = lax.rng_uniform(0, 4, (200,))
    assert ints.dtype == np.int32 and ints.weak_type and set(np.asarray(ints)) <= {0, 1, 2, 3}
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'rng_uniform'"):
        jax.grad(lambda a: lax.rng_uniform(a, 1.0, (2,)).sum())(0.0)


def test_derivatives_of_top_k_reduce_and_barrier() -> None:
    from pyjax.test_util import check_grads
    x = np.random.default_rng(2).normal(size=(3, 5))
    check_grads(lambda v: lax.top_k(v, 2)[0], (x,), order=2)
    check_grads(lambda v: lax.approx_min_k(v, 2, reduction_dimension=0)[0], (x,), order=2)
    check_grads(lambda v: lax.reduce(v, 1.0, lambda a, b: a * b, (1,)), (x,), order=2)
    check_grads(lambda v: lax.optimization_barrier(v * v), (x,), order=2)


def test_generic_reduce_rejects_init_tangents() -> None:
    with pytest.raises(NotImplementedError, match="non-zero tangents for initial values"):
        jax.jvp(lambda i: lax.reduce(np.ones(3, np.float32), i, lambda a, b: a * b, (0,)),
                (np.float32(1),), (np.float32(1),))


def test_precision_enum_and_canonicalisation() -> None:
    assert lax.Precision("highest") is lax.Precision.HIGHEST
    assert lax.Precision("bfloat16") is lax.Precision.DEFAULT
    assert lax.Precision(1) is lax.Precision.HIGH
    assert repr(lax.Precision.HIGH) == "Precision.HIGH" and str(lax.Precision.HIGH) == "HIGH"
    with pytest.raises(ValueError, match="'foo' is not a valid Precision"):
        lax.Precision("foo")
    assert str(lax.DotAlgorithmPreset.F16_F16_F32) == "F16_F16_F32"
    assert lax.DotAlgorithmPreset.BF16_BF16_BF16.accumulation_type == jnp.bfloat16
    assert str(lax.RandomAlgorithm.RNG_PHILOX) == "RNG_PHILOX"
    assert int(lax.FftType.IRFFT) == 3
    assert lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0]) == \
        lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
    with pytest.raises(ValueError, match="At least one of atol"):
        lax.Tolerance()
    x = np.array([-1.5, -0.5, 0.5, 2.5], np.float32)
    np.testing.assert_array_equal(lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
                                  [-2.0, -0.0, 0.0, 2.0])


def test_default_matmul_precision_flag() -> None:
    x = np.ones((2, 2), np.float32)
    jax.config.update("jax_default_matmul_precision", "highest")
    try:
        text = str(jax.make_jaxpr(lambda a: lax.dot(a, a))(x))
    finally:
        jax.config.update("jax_default_matmul_precision", None)
    assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in text


def test_dot_numerics_of_preferred_types_and_algorithms() -> None:
    a = np.full((2, 3), 100, np.int8)
    np.testing.assert_array_equal(lax.dot(a, a.T, preferred_element_type=np.int32), 30000)
    np.testing.assert_array_equal(lax.dot(a, a.T), np.int8(48))  # wraps like XLA
    h = np.array([[1.0001, 3.14159]], np.float16)
    out = lax.dot(h, h.T, precision="F32_F32_F32")
    assert out.dtype == np.float16
    with pytest.raises(ValueError, match="is not supported by dot_general on CPU"):
        lax.dot(h, h.T, precision="F16_F16_F32")
    with pytest.raises(jax.errors.JaxRuntimeError, match="ALG_DOT_BF16_BF16_F32"):
        lax.dot(h.astype(np.float32), h.T.astype(np.float32), precision="BF16_BF16_F32")


def test_tokens_and_sinks() -> None:
    tok = lax.after_all(lax.create_token(), lax.create_token())
    assert type(tok).__name__ == "Token"
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        lax.after_all(np.ones(2))
    assert lax.dce_sink(np.ones(2)) is None


def test_tokens_pass_through_jit() -> None:
    made = jax.jit(lambda x: (x + 1, lax.create_token()))
    for _ in range(2):  # the traced call, then the cached one
        value, tok = made(1.0)
        assert type(tok).__name__ == "Token" and float(value) == 2.0
    same = jax.jit(lambda t: t)
    assert same(tok) is tok and same(tok) is tok
    ordered, doubled = jax.jit(lambda t, x: (lax.after_all(t), x * 2))(tok, 3.0)
    assert type(ordered).__name__ == "Token" and float(doubled) == 6.0
    assert str(jax.make_jaxpr(lambda t: lax.after_all(t))(tok)) == (
        "{ lambda ; a:Tok. let b:Tok = after_all a in (b,) }")


def test_composite_runs_its_decomposition_and_rejects_tracer_attributes() -> None:
    twice = lax.composite(lambda x, *, k: x * k, name="my.scale")
    np.testing.assert_array_equal(twice(np.arange(3.0, dtype=np.float32), k=2.0), [0, 2, 4])
    np.testing.assert_array_equal(jax.jit(lambda v: twice(v, k=3.0))(np.ones(2, np.float32)),
                                  [3.0, 3.0])
    with pytest.raises(jax.errors.UnexpectedTracerError, match="as an attribute"):
        jax.jit(lambda v: twice(v, k=v))(np.ones(2, np.float32))
    with pytest.raises(NotImplementedError, match="Batching rule for 'composite'"):
        jax.vmap(lambda v: twice(v, k=2.0))(np.ones((2, 2), np.float32))


def test_platform_dependent_chooses_cpu_then_default() -> None:
    x = np.float32(0.5)
    assert float(lax.platform_dependent(x, cpu=lax.sin, default=lax.cos)) == \
        float(lax.sin(x))
    assert float(lax.platform_dependent(x, tpu=lax.sin, default=lax.cos)) == \
        float(lax.cos(x))
    with pytest.raises(ValueError, match="Use 'cuda' or 'rocm'"):
        lax.platform_dependent(x, gpu=lax.sin)
    with pytest.raises(NotImplementedError, match="not found for platform cpu"):
        lax.platform_dependent(x, tpu=lax.sin)


def test_small_helpers() -> None:
    assert lax.dtype(1.0) == np.float32 and lax.dtype(True) == np.bool_
    with x64_mode(True):
        assert lax.dtype(1.0) == np.float64
    with pytest.raises(ValueError, match="Invalid argument to dtype"):
        lax.dtype(None)
    np.testing.assert_array_equal(lax.empty((2,), np.int32), [0, 0])
    assert lax.collapse(np.ones((2, 3, 4)), 1).shape == (2, 12)
    np.testing.assert_array_equal(
        lax.index_take(np.arange(12).reshape(3, 4), (np.array([0, -1, 5]),), (1,)),
        np.arange(12).reshape(3, 4)[:, [0, 3, 1]].T)
    assert isinstance(lax.shape_as_value((2, 3)), np.ndarray)
    out = lax.stage(2.0)
    assert isinstance(out, jax.Array) and out.weak_type


def test_pad_to_a_negative_size_names_the_whole_result_shape() -> None:
    """JAX 0.10.2's text, recorded by hand from its ValueError."""
    with pytest.raises(ValueError) as info:
        lax.pad(np.ones((2, 4), np.float32), np.float32(0), [(-2, -2, 0), (0, 0, 0)])
    assert str(info.value) == (
        "Dimension size after padding is not at least 0, got result shape (-2, 4), for "
        "padding_config ((-2, -2, 0), (0, 0, 0)) and operand shape (2, 4)")
