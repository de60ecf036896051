"""jax.numpy functions: eager results agree with NumPy (values and dtypes), with JAX's recorded
dtypes and weak types (tests/data/promotion.json), and with their own jit-compiled versions.

NumPy's result dtype, narrowed to 32 bits (as JAX does with x64 off), is the expected dtype for
the int32 / float32 / bool inputs used here; where JAX and NumPy differ the expectation is
written out, with the values recorded from JAX 0.10.2.
"""
import json
import os
import sys

import numpy as np
import pytest

import pyjax
import pyjax.lax as lax
import pyjax.numpy as jnp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "oracle"))
import cases  # noqa: E402

PROMOTION = json.load(open(os.path.join(HERE, "data", "promotion.json")))["records"]

RNG = np.random.default_rng(0)
F = RNG.normal(size=(3, 4)).astype(np.float32)
G = RNG.normal(size=(3, 4)).astype(np.float32)
POS = np.abs(F) + np.float32(0.5)
UNIT = np.tanh(F)
I = RNG.integers(-6, 7, size=(3, 4)).astype(np.int32)
J = (RNG.integers(1, 5, size=(3, 4)) * RNG.choice([-1, 1], size=(3, 4))).astype(np.int32)
SMALL = RNG.integers(0, 4, size=(3, 4)).astype(np.int32)
B = F > 0
C = (F + 1j * G).astype(np.complex64)
A3 = RNG.normal(size=(2, 3, 4)).astype(np.float32)


def _canonical(dtype):
    return {np.dtype("float64"): np.dtype("float32"), np.dtype("int64"): np.dtype("int32"),
            np.dtype("uint64"): np.dtype("uint32"),
            np.dtype("complex128"): np.dtype("complex64")}.get(np.dtype(dtype), np.dtype(dtype))


def _check(got, want, dtype=None, rtol=1e-5, atol=1e-6):
    got_leaves = got if isinstance(got, (list, tuple)) else [got]
    want_leaves = want if isinstance(want, (list, tuple)) else [want]
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        w = np.asarray(w)
        assert isinstance(g, pyjax.Array)
        assert g.dtype == (_canonical(w.dtype) if dtype is None else np.dtype(dtype))
        assert g.shape == w.shape
        np.testing.assert_allclose(np.asarray(g).astype(w.dtype), w, rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------------------
# Promotion and weak types recorded from JAX
# ---------------------------------------------------------------------------------------------

def _operand(name):
    weak = cases.weak_scalars()
    if name in weak:
        return weak[name]
    return np.zeros((), jnp.bfloat16 if name == "bfloat16" else np.dtype(name))


@pytest.mark.parametrize("use_x64", [False, True], ids=["x32", "x64"])
def test_add_promotion_and_weak_types_match_jax(use_x64, request):
    if use_x64:
        request.getfixturevalue("x64")
    wrong = []
    for rec in PROMOTION:
        if rec["kind"] != "add" or rec["x64"] != use_x64:
            continue
        out = jnp.add(_operand(rec["lhs"]), _operand(rec["rhs"]))
        if (str(out.dtype), out.weak_type) != (rec["dtype"], rec["weak_type"]):
            wrong.append((rec["name"], str(out.dtype), out.weak_type))
    assert not wrong


def _body(text):
    """The values in an Array repr, as a NumPy array."""
    body = text[len("Array("):text.rindex(", dtype=")]
    return np.asarray(eval(body, {"nan": np.nan, "inf": np.inf}), dtype=complex)  # noqa: S307


@pytest.mark.parametrize("use_x64", [False, True], ids=["x32", "x64"])
def test_creation_and_reductions_match_jax_records(use_x64, request):
    """cases.canonicalization_cases: dtype, weak type, shape and values (last-digit rounding
    of transcendental functions aside) as JAX 0.10.2 recorded them."""
    if use_x64:
        request.getfixturevalue("x64")
    records = {r["name"]: r for r in PROMOTION
               if r["kind"] == "canonicalize" and r["x64"] == use_x64}
    for name, thunk in cases.canonicalization_cases(jnp, np):
        rec = records["canonicalize:" + name]
        if "error" in rec:
            with pytest.raises(Exception) as info:
                thunk()
            assert type(info.value).__name__ == rec["error"]["type"], name
            continue
        out = thunk()
        if not isinstance(out, pyjax.Array):
            assert repr(out) == rec["value"], name
            continue
        assert (str(out.dtype), out.weak_type, list(out.shape)) == (
            rec["dtype"], rec["weak_type"], rec["shape"]), name
        if repr(out) != rec["repr"]:
            np.testing.assert_allclose(_body(repr(out)), _body(rec["repr"]), rtol=1e-6,
                                       err_msg=name)


# ---------------------------------------------------------------------------------------------
# Elementwise functions vs NumPy
# ---------------------------------------------------------------------------------------------

UNARY = {  # name: input
    "exp": F, "exp2": F, "expm1": F, "log": POS, "log1p": POS, "log2": POS, "log10": POS,
    "sqrt": POS, "cbrt": F, "sin": F, "cos": F, "tan": F, "arcsin": UNIT, "arccos": UNIT,
    "arctan": F, "sinh": F, "cosh": F, "tanh": F, "arcsinh": F, "arccosh": POS + 1,
    "arctanh": UNIT * np.float32(0.9), "absolute": F, "negative": F, "positive": F, "sign": F,
    "floor": F * 3, "ceil": F * 3, "rint": F * 3, "trunc": F * 3, "square": F,
    "reciprocal": POS, "deg2rad": F, "rad2deg": F, "radians": F, "degrees": F, "sinc": F,
    "isnan": F, "isfinite": F, "isinf": F, "isposinf": F, "isneginf": F, "signbit": F,
    "logical_not": F, "conj": F, "real": F, "imag": F, "fabs": F, "spacing": F,
}
INT_UNARY = ["absolute", "negative", "sign", "square", "floor", "ceil", "rint", "trunc", "exp",
             "sqrt", "reciprocal", "invert", "bitwise_count", "logical_not", "isnan", "signbit"]
COMPLEX_UNARY = ["exp", "log", "sqrt", "sin", "cos", "tanh", "absolute", "conj", "real", "imag",
                 "log10", "log2", "isfinite", "isinf", "isnan", "square", "negative"]


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float_matches_numpy(name):
    x = UNARY[name]
    with np.errstate(all="ignore"):
        _check(getattr(jnp, name)(x), getattr(np, name)(x), rtol=2e-5)


@pytest.mark.parametrize("name", INT_UNARY)
def test_unary_int_matches_numpy(name):
    """Integers promote to float for inexact functions (reciprocal too, unlike NumPy)."""
    x = np.where(I == 0, 1, I).astype(np.int32) if name == "reciprocal" else I
    reference = (lambda v: 1 / v) if name == "reciprocal" else getattr(np, name)
    with np.errstate(all="ignore"):
        _check(getattr(jnp, name)(x), reference(x))


@pytest.mark.parametrize("name", COMPLEX_UNARY)
def test_unary_complex_matches_numpy(name):
    _check(getattr(jnp, name)(C), getattr(np, name)(C), rtol=2e-5)


BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
          "mod", "fmod", "maximum", "minimum", "fmax", "fmin", "arctan2", "hypot", "logaddexp",
          "logaddexp2", "copysign", "heaviside", "nextafter", "equal", "not_equal", "less",
          "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
          "float_power"]
INT_BINARY = ["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "fmod",
              "maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor", "equal", "less",
              "greater_equal", "logical_and", "power", "left_shift", "right_shift"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_float_matches_numpy(name):
    x, y = (POS, G) if name == "float_power" else (F, G)
    with np.errstate(all="ignore"):
        _check(getattr(jnp, name)(x, y), getattr(np, name)(x, y), rtol=2e-5)


@pytest.mark.parametrize("name", INT_BINARY)
def test_binary_int_matches_numpy(name):
    y = SMALL if name in ("power", "left_shift", "right_shift") else J
    _check(getattr(jnp, name)(I, y), getattr(np, name)(I, y))


def test_divmod_float_and_int_match_numpy():
    _check(jnp.divmod(F, G), np.divmod(F, G), rtol=2e-5)
    _check(jnp.divmod(I, J), np.divmod(I, J))
    _check(jnp.modf(F), np.modf(F))


def test_operators_match_numpy():
    for got, want in [(F + 1, F + 1), (2 - F, 2 - F), (F * 2.5, F * 2.5), (1 / POS, 1 / POS),
                      (I // 3, I // 3), (I % 3, I % 3), (7.0 % POS, 7.0 % POS), (F ** 2, F ** 2),
                      (POS ** 0.5, POS ** 0.5), (2 ** F, 2 ** F), (I ** 2, I ** 2),
                      (I << 1, I << 1), (I >> 1, I >> 1), (-F, -F), (abs(I), abs(I)),
                      (~I, ~I), (B & (F < 1), B & (F < 1)), (F @ G.T, F @ G.T)]:
        expected = want
        got = jnp.asarray(got) if not isinstance(got, pyjax.Array) else got
        _check(got, expected, rtol=2e-5)
    x = jnp.asarray(F)
    _check(x + 1, F + 1)
    _check(2 ** x, 2 ** F, rtol=2e-5)
    _check(x ** jnp.asarray(SMALL), F ** SMALL, rtol=2e-5)
    _check(divmod(jnp.asarray(I), jnp.asarray(J)), divmod(I, J))
    assert round(jnp.float32(2.5)).dtype == np.int32
    _check(round(x, 1), np.round(F, 1))


# values recorded from JAX 0.10.2 where NumPy differs (division by zero) or to pin down signs
SPECIAL = [
    (lambda: jnp.floor_divide(np.array([7, -7, 7, -7, 0, 5], np.int32),
                              np.array([2, 2, -2, -2, 0, 0], np.int32)), [3, -4, -4, 3, -1, -2]),
    (lambda: jnp.remainder(np.array([7, -7, 7, -7, 0, 5], np.int32),
                           np.array([2, 2, -2, -2, 0, 0], np.int32)), [1, 1, -1, -1, 0, 0]),
    (lambda: jnp.fmod(np.array([7, -7, 7, -7, 0, 5], np.int32),
                      np.array([2, 2, -2, -2, 0, 0], np.int32)), [1, -1, 1, -1, 0, 0]),
    (lambda: jnp.floor_divide(np.array([7., -7., 0., 5., np.inf], np.float32),
                              np.array([-2., -2., 0., 0., 2.], np.float32)),
     [-4.0, 3.0, np.nan, np.inf, np.nan]),
    (lambda: jnp.power(np.array([2, -3, 0, 5], np.int32), np.array([3, 3, 0, 40], np.int32)),
     [8, -27, 1, -1413876383]),
    (lambda: jnp.round(np.array([0.5, 1.5, 2.5, -0.5], np.float32)), [0.0, 2.0, 2.0, -0.0]),
    (lambda: jnp.signbit(np.array([-0.0, 0.0, -np.nan, np.nan, -1], np.float32)),
     [True, False, True, False, True]),
    (lambda: jnp.sort(np.array([3., np.nan, -0., 0., -np.inf], np.float32)),
     [-np.inf, -0.0, 0.0, 3.0, np.nan]),
    (lambda: jnp.argsort(np.array([3., np.nan, -0., 0., -np.inf], np.float32)), [4, 2, 3, 0, 1]),
    (lambda: jnp.argsort(np.array([1, 3, 1, 2, 3], np.int32), descending=True), [1, 4, 3, 0, 2]),
    (lambda: jnp.var(np.ones(3, np.float32), ddof=3), np.nan),
    (lambda: jnp.hypot(np.float32([np.inf, 3, 0]), np.float32([np.nan, 4, 0])),
     [np.inf, 5.0, 0.0]),
    (lambda: jnp.max(np.zeros((0, 3), np.float32), axis=0, initial=-1), [-1.0, -1.0, -1.0]),
]


@pytest.mark.parametrize("thunk,want", SPECIAL)
def test_special_values_match_jax(thunk, want):
    got = np.asarray(thunk())
    want = np.asarray(want, dtype=got.dtype)
    np.testing.assert_array_equal(got, want)
    numbers = ~np.isnan(want.astype(float))
    np.testing.assert_array_equal(np.signbit(got.astype(float))[numbers],
                                  np.signbit(want.astype(float))[numbers])


def test_where_and_clip_match_numpy():
    _check(jnp.where(F > 0, F, 0), np.where(F > 0, F, 0))
    _check(jnp.where(F[0] > 0, F, I), np.where(F[0] > 0, F, I))
    _check(jnp.where(I, 1.0, 2), np.where(I, 1.0, 2).astype(np.float32))
    _check(jnp.where(True, F, G), F)
    _check(jnp.clip(F, -0.5, 0.5), np.clip(F, -0.5, 0.5))
    _check(jnp.clip(I, max=2), np.clip(I, None, 2))
    _check(jnp.asarray(F).clip(min=0), np.clip(F, 0, None))
    assert [np.asarray(a).tolist() for a in jnp.where(np.array([0, 3, 0, 4]))] == [[1, 3]]


def test_weak_types_follow_jax():
    assert jnp.add(1, 2.0).weak_type and jnp.add(1, 2.0).dtype == np.float32
    assert jnp.sqrt(4).weak_type and jnp.sqrt(4).dtype == np.float32
    assert not jnp.sqrt(np.int32(4)).weak_type
    assert jnp.deg2rad(1.0).weak_type
    assert not jnp.sum(jnp.asarray(3.0)).weak_type
    assert jnp.full((2,), 3.0).weak_type and not jnp.full((2,), 3.0, jnp.float32).weak_type
    assert jnp.zeros_like(jnp.asarray(3.0)).weak_type
    assert jnp.where(True, 1.0, 2.0).weak_type
    assert not jnp.where(True, np.float32(1), 2.0).weak_type
    assert jnp.clip(1.5, 0, 1).weak_type


# ---------------------------------------------------------------------------------------------
# Reductions vs NumPy
# ---------------------------------------------------------------------------------------------

REDUCTIONS = ["sum", "prod", "max", "min", "mean", "var", "std", "all", "any", "ptp", "amax",
              "amin"]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(name, axis, keepdims):
    for x in (F, I):
        want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
        _check(getattr(jnp, name)(x, axis=axis, keepdims=keepdims), want, rtol=2e-5)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_arg_reductions_match_numpy(name, axis):
    for keepdims in (False, True):
        _check(getattr(jnp, name)(F, axis=axis, keepdims=keepdims),
               getattr(np, name)(F, axis=axis, keepdims=keepdims))


def test_reduction_options_match_numpy():
    _check(jnp.sum(F, where=F > 0), np.sum(F, where=F > 0))
    _check(jnp.sum(I, initial=5), np.sum(I, initial=5))
    _check(jnp.prod(B, axis=0), np.prod(B, axis=0))
    _check(jnp.sum(B), np.sum(B))
    _check(jnp.sum(I, dtype=jnp.float32), np.sum(I, dtype=np.float32))
    _check(jnp.sum(I.astype(np.int8)), np.sum(I.astype(np.int8)))
    _check(jnp.sum(SMALL.astype(np.uint8), axis=1), np.sum(SMALL.astype(np.uint8), axis=1))
    _check(jnp.max(F, axis=0, where=F > 0, initial=-1.0),
           np.max(F, axis=0, where=F > 0, initial=-1.0))
    _check(jnp.mean(F, axis=1, where=F > 0), np.mean(F, axis=1, where=F > 0))
    _check(jnp.mean(F.astype(np.float16)), np.mean(F.astype(np.float16)), rtol=1e-3)
    _check(jnp.sum(F.astype(np.float16)), np.sum(F.astype(np.float16)), rtol=1e-3)
    _check(jnp.var(F, axis=0, ddof=1), np.var(F, axis=0, ddof=1), rtol=2e-5)
    _check(jnp.std(I, correction=1), np.std(I, ddof=1), rtol=2e-5)
    _check(jnp.var(C), np.var(C), rtol=2e-5)
    _check(jnp.count_nonzero(I, axis=0), np.count_nonzero(I, axis=0))
    assert jnp.sum(I, dtype=jnp.float32).dtype == np.float32
    assert jnp.all(F).dtype == np.bool_
    with pytest.raises(ValueError, match="duplicate value"):
        jnp.sum(F, axis=(0, 0))
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.sum(F, axis=2)
    with pytest.raises(ValueError, match="zero-size array"):
        jnp.max(np.zeros((0,), np.float32))


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_cumulative_reductions_match_numpy(axis):
    _check(jnp.cumsum(F, axis=axis), np.cumsum(F, axis=axis), rtol=2e-5)
    _check(jnp.cumprod(F, axis=axis), np.cumprod(F, axis=axis), rtol=2e-5)
    _check(jnp.cumsum(B, axis=axis), np.cumsum(B, axis=axis))
    nan = np.where(F > 1, np.nan, F).astype(np.float32)
    _check(jnp.nancumsum(nan, axis=axis), np.nancumsum(nan, axis=axis), rtol=2e-5)
    _check(jnp.nancumprod(nan, axis=axis), np.nancumprod(nan, axis=axis), rtol=2e-5)
    _check(jnp.cumsum(I, axis=axis, dtype=jnp.float32),
           np.cumsum(I, axis=axis, dtype=np.float32))


# ---------------------------------------------------------------------------------------------
# Creation and shapes vs NumPy
# ---------------------------------------------------------------------------------------------

def test_creation_matches_numpy():
    _check(jnp.zeros((2, 3)), np.zeros((2, 3), np.float32))
    _check(jnp.ones(3, dtype=int), np.ones(3, np.int32))
    _check(jnp.full((2, 2), 7), np.full((2, 2), 7, np.int32))
    _check(jnp.full((2, 3), F[0, :3]), np.full((2, 3), F[0, :3]))
    _check(jnp.full_like(F, 2), np.full_like(F, 2))
    _check(jnp.ones_like(F, dtype=jnp.int32, shape=(4,)), np.ones(4, np.int32))
    _check(jnp.empty((2,)), np.zeros(2, np.float32))
    _check(jnp.eye(3, 4, k=1), np.eye(3, 4, k=1))
    _check(jnp.eye(4, 3, k=-1, dtype=jnp.int32), np.eye(4, 3, k=-1, dtype=np.int32))
    _check(jnp.identity(3), np.identity(3))
    _check(jnp.tri(3, 4, -1), np.tri(3, 4, -1))
    _check(jnp.tril(A3, 1), np.tril(A3, 1))
    _check(jnp.triu(F, -1), np.triu(F, -1))
    _check(jnp.array([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]], np.int32))
    _check(jnp.array([1, 2.5]), np.array([1, 2.5], np.float32))
    _check(jnp.array([jnp.float32(1), 2]), np.array([1, 2], np.float32))
    _check(jnp.array(F, ndmin=4), np.array(F, ndmin=4))
    _check(jnp.asarray(I, dtype=jnp.float16), I.astype(np.float16))
    _check(jnp.copy(F), F)
    _check(jnp.astype(I, None), I.astype(np.float32))
    assert jnp.array(3).weak_type and not jnp.array(3, dtype=jnp.int32).weak_type


@pytest.mark.parametrize("args", [(5,), (2, 7), (1, 10, 2), (10, 1, -3), (0.0, 1.0, 0.1),
                                  (5.5,), (0, 1, 0.25)])
def test_arange_matches_numpy(args):
    _check(jnp.arange(*args), np.arange(*args), rtol=1e-6)


@pytest.mark.parametrize("args,kwargs", [
    ((0, 1, 5), {}), ((0, 1, 7), {}), ((0, 1, 4), {"endpoint": False}), ((-1, 1, 60), {}),
    ((2, 3, 1), {}), ((2, 3, 0), {}), ((0, 10, 4), {"dtype": jnp.int32}),
    ((np.array([0., 1.]), np.array([1., 3.]), 4), {"axis": 1}),
])
def test_linspace_matches_numpy(args, kwargs):
    np_kwargs = {k: (np.int32 if v is jnp.int32 else v) for k, v in kwargs.items()}
    _check(jnp.linspace(*args, **kwargs), np.linspace(*args, **np_kwargs), rtol=1e-6,
           atol=1e-7)
    values, step = jnp.linspace(0.0, 2.0, 5, retstep=True)
    assert float(step) == 0.5


def test_shape_functions_match_numpy():
    # (jnp.reshape of a NumPy array is NumPy's own reshape, as in JAX: tests/test_array_interop.py)
    _check(jnp.reshape(jnp.asarray(A3), (4, 6)), np.reshape(A3, (4, 6)))
    _check(jnp.reshape(jnp.asarray(A3), (4, -1), order="F"), np.reshape(A3, (4, -1), order="F"))
    _check(jnp.asarray(A3).reshape(3, -1), A3.reshape(3, -1))
    _check(jnp.ravel(A3), np.ravel(A3))
    _check(jnp.ravel(F, order="F"), np.ravel(F, order="F"))
    _check(jnp.transpose(A3), np.transpose(A3))
    _check(jnp.asarray(A3).transpose(2, 0, 1), A3.transpose(2, 0, 1))
    _check(jnp.asarray(A3).mT, np.swapaxes(A3, -1, -2))
    _check(jnp.swapaxes(A3, 0, 2), np.swapaxes(A3, 0, 2))
    _check(jnp.moveaxis(A3, [0, 1], [-1, 0]), np.moveaxis(A3, [0, 1], [-1, 0]))
    _check(jnp.squeeze(np.ones((1, 3, 1))), np.squeeze(np.ones((1, 3, 1))))
    _check(jnp.expand_dims(F, (0, -1)), np.expand_dims(F, (0, -1)))
    _check(jnp.broadcast_to(F[0], (2, 3, 4)), np.broadcast_to(F[0], (2, 3, 4)))
    _check(jnp.broadcast_arrays(F, F[0], np.float32(1)),
           np.broadcast_arrays(F, F[0], np.float32(1)))
    assert jnp.broadcast_shapes((2, 1), (3,)) == (2, 3)
    _check(jnp.concatenate([F, G], axis=-1), np.concatenate([F, G], axis=-1))
    _check(jnp.concatenate([F, I]), np.concatenate([F, I]).astype(np.float32))
    _check(jnp.concatenate([F, G], axis=None), np.concatenate([F, G], axis=None))
    _check(jnp.concatenate(A3), np.concatenate(A3))
    _check(jnp.stack([F, G], axis=-1), np.stack([F, G], axis=-1))
    _check(jnp.stack(A3), np.stack(A3))
    _check(jnp.vstack([F[0], F[1]]), np.vstack([F[0], F[1]]))
    _check(jnp.hstack([F, G]), np.hstack([F, G]))
    _check(jnp.dstack([F, G]), np.dstack([F, G]))
    _check(jnp.column_stack([F[0], F[1]]), np.column_stack([F[0], F[1]]))
    _check(jnp.atleast_1d(np.float32(1)), np.atleast_1d(np.float32(1)))
    _check(jnp.atleast_2d(F[0]), np.atleast_2d(F[0]))
    _check(jnp.atleast_3d(F), np.atleast_3d(F))
    _check(jnp.atleast_3d(np.float32(1), F[0]), np.atleast_3d(np.float32(1), F[0]))


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_reordering_matches_numpy(axis):
    _check(jnp.flip(F, axis=axis), np.flip(F, axis=axis))
    _check(jnp.roll(F, 2, axis=axis), np.roll(F, 2, axis=axis))
    _check(jnp.roll(F, -5, axis=axis), np.roll(F, -5, axis=axis))
    _check(jnp.sort(F, axis=axis), np.sort(F, axis=axis))
    _check(jnp.argsort(F, axis=axis), np.argsort(F, axis=axis, kind="stable"))
    _check(jnp.repeat(F, 2, axis=axis), np.repeat(F, 2, axis=axis))
    _check(jnp.cumsum(I, axis=axis), np.cumsum(I, axis=axis))


def test_more_reordering_matches_numpy():
    _check(jnp.roll(F, (1, -2), axis=(0, 1)), np.roll(F, (1, -2), axis=(0, 1)))
    _check(jnp.flip(A3, (0, 2)), np.flip(A3, (0, 2)))
    _check(jnp.fliplr(F), np.fliplr(F))
    _check(jnp.flipud(F), np.flipud(F))
    _check(jnp.sort(F, axis=0, descending=True), -np.sort(-F, axis=0))
    _check(jnp.argsort(I, axis=0, descending=True), np.argsort(-I, axis=0, kind="stable"))
    _check(jnp.repeat(F, np.array([1, 0, 2]), axis=0), np.repeat(F, [1, 0, 2], axis=0))
    _check(jnp.repeat(np.float32(2), 3, axis=0), np.repeat(np.float32(2), 3, axis=0))
    _check(jnp.split(F, [1, 3], axis=1), np.split(F, [1, 3], axis=1))
    _check(jnp.split(F, 3), np.split(F, 3))
    _check(jnp.array_split(F, 3, axis=1), np.array_split(F, 3, axis=1))
    _check(jnp.tile(F, (2, 1, 3)), np.tile(F, (2, 1, 3)))
    _check(jnp.tile(F[0], 2), np.tile(F[0], 2))
    with pytest.raises(ValueError, match="equal division"):
        jnp.split(F, 3, axis=1)


def test_lax_additions_match_numpy():
    _check(lax.cumsum(F, 1, reverse=True), np.flip(np.cumsum(np.flip(F, 1), 1), 1), rtol=2e-5)
    _check(lax.cummax(F, 0), np.maximum.accumulate(F, 0))
    _check(lax.cummin(I, 1), np.minimum.accumulate(I, 1))
    _check(lax.cumlogsumexp(F, 0), np.logaddexp.accumulate(F, 0), rtol=2e-5)
    _check(lax.sort(F, 0), np.sort(F, 0))
    half = np.array([np.nan, 2, -1, 0.5], jnp.bfloat16)
    np.testing.assert_array_equal(np.asarray(lax.sort(half)).astype(np.float32),
                                  [-1, 0.5, 2, np.nan])
    keys, values = lax.sort_key_val(F[0], I[0])
    _check(values, I[0][np.argsort(F[0], kind="stable")])
    _check(lax.sort((I[0], F[0]), num_keys=1)[1], F[0][np.argsort(I[0], kind="stable")])
    _check(lax.bitcast_convert_type(F, jnp.int32), F.view(np.int32))
    _check(lax.bitcast_convert_type(F, jnp.int16), F.view(np.int16).reshape(3, 4, 2))
    _check(lax.bitcast_convert_type(F.view(np.int8).reshape(3, 4, 4), jnp.float32), F)
    _check(lax.split(F, (1, 3), axis=1), np.split(F, [1], axis=1))
    _check(lax.tile(F, (2, 1)), np.tile(F, (2, 1)))
    _check(lax.full((2,), 3.0), np.full(2, 3.0, np.float32))
    _check(lax.full_like(I, 2, shape=(5,)), np.full(5, 2, np.int32))
    _check(lax.slice_in_dim(F, -2, None, axis=1), F[:, -2:])
    _check(lax.index_in_dim(F, -1, axis=1, keepdims=False), F[:, -1])
    tree = lax.stop_gradient({"a": F, "b": (I,)})
    _check(tree["a"], F)
    _check(tree["b"][0], I)


# ---------------------------------------------------------------------------------------------
# Products vs NumPy
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("a,b", [
    (F, G.T), (F[0], G.T), (F, G[0]), (F[0], G[0]), (A3, G.T), (A3, G[0]),
    (RNG.normal(size=(2, 1, 3, 4)), RNG.normal(size=(5, 4, 2))), (F[0], A3.transpose(0, 2, 1)),
    (np.ones((1, 2, 3), np.float32), np.ones((1, 3, 2), np.float32)), (I, J.T),
])
def test_matmul_matches_numpy(a, b):
    _check(jnp.matmul(a, b), np.matmul(a, b), rtol=2e-5, atol=1e-5)


def test_products_match_numpy():
    _check(jnp.dot(F, G.T), np.dot(F, G.T), rtol=2e-5)
    _check(jnp.dot(A3, np.ones((2, 4, 3), np.float32)), np.dot(A3, np.ones((2, 4, 3),
                                                                          np.float32)))
    _check(jnp.dot(F, 2.0), np.dot(F, 2.0))
    _check(jnp.dot(I[0], F[0]), np.dot(I[0], F[0]), rtol=2e-5)
    _check(jnp.dot(B[0], B[1]), np.dot(B[0], B[1]))
    _check(jnp.tensordot(A3, G.T, 1), np.tensordot(A3, G.T, 1), rtol=2e-5)
    _check(jnp.tensordot(A3, A3, ([1, 2], [1, 2])), np.tensordot(A3, A3, ([1, 2], [1, 2])),
           rtol=2e-5)
    _check(jnp.inner(F, G), np.inner(F, G), rtol=2e-5)
    _check(jnp.outer(F, G[0]), np.outer(F, G[0]))
    _check(jnp.vdot(C, C), np.vdot(C, C), rtol=2e-5)
    _check(jnp.dot(I, J.T, preferred_element_type=jnp.float32), np.dot(I, J.T),
           dtype=np.float32)


@pytest.mark.parametrize("spec,operands", [
    ("ij,jk->ik", (F, G.T)), ("ij->ji", (F,)), ("ii->i", (F[:, :3],)), ("ii", (F[:, :3],)),
    ("ij,ij->", (F, G)), ("bij,bjk->bik", (A3, A3.transpose(0, 2, 1))), ("i,j->ij", (F[0], G[1])),
    ("ij->", (F,)), ("iij->j", (np.ones((2, 2, 3), np.float32),)), ("ijk->j", (A3,)),
    ("ij,jk,kl->il", (F, G.T, F)), ("ij,kj->ik", (F[:, :1], G[:, :1])), ("i,i->", (F[0], G[0])),
])
def test_einsum_matches_numpy(spec, operands):
    _check(jnp.einsum(spec, *operands), np.einsum(spec, *operands), rtol=2e-5, atol=1e-5)
    _check(jnp.einsum(spec, *operands, optimize=False), np.einsum(spec, *operands),
           rtol=2e-5, atol=1e-5)


def test_einsum_dtypes_follow_jax():
    assert jnp.einsum("ij,jk->ik", I, F.T).dtype == np.float32
    assert jnp.einsum("ij,jk->ik", I, J.T, preferred_element_type=jnp.float32).dtype == \
        np.float32


# ---------------------------------------------------------------------------------------------
# jit agrees with eager
# ---------------------------------------------------------------------------------------------

JIT_CASES = {
    "power_int": (lambda x, y: x ** y, (I, SMALL)),
    "floor_divide": (lambda x, y: x // y, (I, J)),
    "remainder_float": (lambda x, y: x % y, (F, G)),
    "divmod": (lambda x, y: divmod(x, y), (I, J)),
    "hypot": (jnp.hypot, (F, G)),
    "logaddexp": (jnp.logaddexp, (F, G)),
    "signbit": (jnp.signbit, (F,)),
    "trunc": (jnp.trunc, (F * 3,)),
    "round2": (lambda x: jnp.round(x, 2), (F,)),
    "where": (lambda c, x: jnp.where(c, x, 0.5), (B, F)),
    "clip": (lambda x: jnp.clip(x, -0.5, 0.5), (F,)),
    "var": (lambda x: jnp.var(x, axis=0, ddof=1), (F,)),
    "std": (jnp.std, (I,)),
    "mean_where": (lambda x: jnp.mean(x, where=x > 0), (F,)),
    "sum_keep": (lambda x: jnp.sum(x, axis=1, keepdims=True), (I,)),
    "argmax": (lambda x: jnp.argmax(x, axis=1, keepdims=True), (F,)),
    "cumsum": (jnp.cumsum, (F,)),
    "sort_desc": (lambda x: jnp.sort(x, axis=0, descending=True), (F,)),
    "argsort": (jnp.argsort, (F,)),
    "flip": (jnp.flip, (A3,)),
    "roll": (lambda x: jnp.roll(x, 3), (F,)),
    "split": (lambda x: jnp.split(x, 2, axis=1), (F,)),
    "tile": (lambda x: jnp.tile(x, (2, 1)), (F,)),
    "repeat": (lambda x: jnp.repeat(x, 2, axis=0), (F,)),
    "linspace": (lambda x: jnp.linspace(0, x, 9), (np.float32(3),)),
    "arange": (lambda x: jnp.arange(0, 1, 0.1) + x, (np.float32(1),)),
    "eye": (lambda x: jnp.eye(3) * x, (np.float32(2),)),
    "tril": (jnp.tril, (F,)),
    "array": (lambda x, y: jnp.array([x, y, 1.0]), (np.float32(1), np.float32(2))),
    "atleast_3d": (jnp.atleast_3d, (F,)),
    "matmul": (jnp.matmul, (A3, G.T)),
    "einsum": (lambda x, y: jnp.einsum("bij,jk->bk", x, y), (A3, G.T)),
    "outer": (jnp.outer, (F[0], G[0])),
    "column_stack": (lambda x, y: jnp.column_stack([x, y]), (F[0], G[0])),
    "complex": (lambda c: (jnp.conj(c), jnp.real(c), jnp.imag(c), jnp.abs(c)), (C,)),
    "isinf": (jnp.isinf, (np.float32([np.inf, -1, np.nan]),)),
    "logical": (lambda x, y: jnp.logical_xor(x, y), (F, I)),
}


@pytest.mark.parametrize("name", sorted(JIT_CASES))
def test_jit_matches_eager(name):
    fn, args = JIT_CASES[name]
    args = [jnp.asarray(a) for a in args]
    eager = pyjax.tree_util.tree_leaves(fn(*args))
    jitted = pyjax.tree_util.tree_leaves(pyjax.jit(fn)(*args))
    assert len(eager) == len(jitted)
    for e, j in zip(eager, jitted):
        assert (e.dtype, e.shape, e.weak_type) == (j.dtype, j.shape, j.weak_type)
        np.testing.assert_allclose(np.asarray(j), np.asarray(e), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("k", [0, 1, -1, 3, -4])
def test_diag_and_diagonal_match_numpy(k):
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(jnp.diagonal(jnp.asarray(a), k), np.diagonal(a, k))
    np.testing.assert_array_equal(jnp.diag(jnp.asarray(a), k), np.diag(a, k))
    v = np.arange(3.0, dtype=np.float32)
    np.testing.assert_array_equal(jnp.diag(jnp.asarray(v), k), np.diag(v, k))


@pytest.mark.parametrize("make", [
    lambda: jnp.ones(3, jnp.float32) * 2.0, lambda: 2 * jnp.ones(3, jnp.float32),
    lambda: jnp.ones(3, jnp.int8) + 100, lambda: jnp.ones(3, jnp.uint8) + 200,
    lambda: jnp.ones(3, jnp.int8) + 300, lambda: jnp.ones(3, jnp.uint8) - 1,
    lambda: jnp.ones(3, jnp.int32) * 2.5, lambda: jnp.asarray(2.0) * jnp.ones(3, jnp.float16),
    lambda: jnp.asarray(1.5) * 2, lambda: jnp.ones(3, jnp.complex64) * 2.0,
    lambda: jnp.ones(3, jnp.bfloat16) * 2.0, lambda: jnp.ones(3, jnp.float32) > 0,
    lambda: jnp.ones(2, jnp.float16) * (1 + 2 ** -11 + 2 ** -40),  # rounds through float32
    lambda: jnp.asarray(1.0) * 2.0, lambda: jnp.asarray(np.float16(1)) * 2.0,  # weak arrays
])
def test_array_with_python_scalar_matches_general_promotion(make):
    """The fast path for `array op python_scalar` gives what the lattice path gives (values,
    dtype, weak type); JAX wraps int8 + 300 to 45 as this does."""
    from pyjax._src.numpy import util
    fast = make()
    saved = util._array_and_scalar
    util._array_and_scalar = lambda x, y: None
    try:
        general = make()
    finally:
        util._array_and_scalar = saved
    assert (fast.dtype, fast.weak_type) == (general.dtype, general.weak_type)
    np.testing.assert_array_equal(fast, general)


def test_weak_array_with_python_scalar_follows_the_lattice_under_x64():
    import pyjax
    a, i = jnp.asarray(1.0), jnp.asarray(3)
    with pyjax.enable_x64():
        assert ((a * 2.0).dtype, (a * 2.0).weak_type) == (np.float64, True)
        assert (i + 1).dtype == np.int64
    assert float((jnp.ones(2, jnp.float16) * (1 + 2 ** -11 + 2 ** -40))[0]) == 1.0


def test_array_equiv_broadcasts_and_prints_as_jax() -> None:
    """JAX 0.10.2's jaxpr, recorded by hand."""
    assert bool(jnp.array_equiv(np.array([1, 2]), np.array([[1, 2], [1, 2]])))
    assert not bool(jnp.array_equiv(np.array([1, 2]), np.array([[1, 2], [1, 3]])))
    text = str(pyjax.make_jaxpr(jnp.array_equiv)(np.ones(2, np.float32),
                                                  np.ones((3, 2), np.int32)))
    assert text == ("{ lambda ; a:f32[2] b:i32[3,2]. let\n"
                    "    c:f32[3,2] = convert_element_type[new_dtype=float32 weak_type=False] b\n"
                    "    d:f32[1,2] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n"
                    "    e:bool[3,2] = eq d c\n"
                    "    f:bool[] = reduce_and[axes=(0, 1)] e\n"
                    "  in (f,) }")


def test_promote_shapes_gives_scalars_the_common_rank():
    """With operands of two different nonzero ranks, JAX broadcasts every operand to the
    result rank, scalars included (its broadcast_to_rank): the scalar becomes f32[1,1]."""
    from pyjax._src.numpy.util import promote_shapes
    out = promote_shapes("f", jnp.ones((2, 3)), jnp.ones(3), jnp.float32(1))
    assert [o.shape for o in out] == [(2, 3), (1, 3), (1, 1)]
    same_rank = promote_shapes("f", jnp.ones((2, 3)), jnp.float32(1))
    assert [np.shape(o) for o in same_rank] == [(2, 3), ()]
