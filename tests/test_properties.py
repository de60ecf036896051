"""Type promotion against JAX's recorded table, and jnp broadcasting against NumPy.

(a) Every record of tests/data/promotion.json (recorded from JAX 0.10.2, x64 off and on) for
    `x + y` (dtype and weak type), jnp.result_type and jnp.promote_types is checked exactly,
    on the eager, jit and eval_shape paths; hypothesis then mixes the same inputs into other
    standard-promotion binary ops with random shapes.
(b) Random broadcast-compatible shapes: jnp binary ops agree with NumPy in shape and values;
    incompatible shapes raise JAX's errors (TypeError from lax when the ranks agree, ValueError
    from jnp's rank promotion when they differ).
"""
from __future__ import annotations

import builtins
import contextlib
import json
import os
from typing import Any, Iterator

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pyjax
import pyjax.numpy as jnp

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "promotion.json")) as f:
    RECORDS: list[dict] = json.load(f)["records"]

STRONG = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
          "bfloat16", "float16", "float32", "float64", "complex64", "complex128"]
WEAK = {"weak_int": 1, "weak_float": 1.0, "weak_complex": 1j}
INPUTS = STRONG + list(WEAK)
KINDS = ("add", "result_type", "promote_types", "result_type_unary", "abstractify")


@contextlib.contextmanager
def x64_mode(enabled: bool) -> Iterator[None]:
    """jax_enable_x64 set to `enabled` for the block, then restored."""
    previous = pyjax.config.read("jax_enable_x64")
    pyjax.config.update("jax_enable_x64", enabled)
    try:
        yield
    finally:
        pyjax.config.update("jax_enable_x64", previous)


def np_dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def value(name: str, shape: tuple[int, ...] = ()) -> Any:
    """The recorded input: a NumPy zero array for a dtype name, a Python scalar if weak."""
    return WEAK[name] if name in WEAK else np.zeros(shape, np_dtype(name))


def dtype_arg(name: str) -> Any:
    """What the recorder passed to result_type: a dtype, or the weak Python scalar."""
    return WEAK[name] if name in WEAK else np_dtype(name)


def dtype_name(dtype: Any) -> str:
    return np.dtype(dtype).name


def expect_error(rec: dict) -> Any:
    err = rec["error"]
    return getattr(builtins, err["type"], Exception)


ADD: dict[tuple[str, str, bool], dict] = {
    (r["lhs"], r["rhs"], r["x64"]): r for r in RECORDS if r["kind"] == "add"}


def record_id(rec: dict) -> str:
    return f"{rec['name']}-x64={rec['x64']}"


# ---------------------------------------------------------------------------------------------
# (a) promotion: every record, exhaustively
# ---------------------------------------------------------------------------------------------

def _check_aval(rec: dict, got: Any, how: str) -> None:
    assert dtype_name(got.dtype) == rec["dtype"], (
        f"{rec['name']} (x64={rec['x64']}, {how}): dtype {got.dtype}, JAX {rec['dtype']}")
    if "weak_type" in rec:
        assert bool(got.weak_type) == rec["weak_type"], (
            f"{rec['name']} (x64={rec['x64']}, {how}): weak_type {got.weak_type}, "
            f"JAX {rec['weak_type']}")


@pytest.mark.parametrize("rec", [r for r in RECORDS if r["kind"] == "add"], ids=record_id)
def test_add_promotion(rec: dict) -> None:
    a, b = rec["lhs"], rec["rhs"]
    with x64_mode(rec["x64"]):
        paths = {"eval_shape": lambda: pyjax.eval_shape(lambda u, v: u + v, value(a), value(b)),
                 "jit": lambda: pyjax.jit(lambda u, v: u + v)(value(a), value(b))}
        if a not in WEAK:  # eager needs an array on one side (two Python scalars stay Python)
            paths["eager"] = lambda: jnp.asarray(value(a)) + value(b)
        if b not in WEAK:
            paths["eager_reflected"] = lambda: value(a) + jnp.asarray(value(b))
        for how, thunk in paths.items():
            if "error" in rec:
                with pytest.raises(expect_error(rec)):
                    thunk()
            else:
                _check_aval(rec, thunk(), how)


@pytest.mark.parametrize("rec", [r for r in RECORDS if r["kind"] in KINDS[1:]], ids=record_id)
def test_dtype_functions(rec: dict) -> None:
    kind, a, b = rec["kind"], rec["lhs"], rec.get("rhs")
    with x64_mode(rec["x64"]):
        if kind == "result_type":
            thunk = lambda: jnp.result_type(dtype_arg(a), dtype_arg(b))  # noqa: E731
        elif kind == "promote_types":
            thunk = lambda: jnp.promote_types(np_dtype(a), np_dtype(b))  # noqa: E731
        elif kind == "result_type_unary":
            thunk = lambda: jnp.result_type(dtype_arg(a))  # noqa: E731
        else:  # abstractify: what a traced function sees for the input
            thunk = lambda: pyjax.eval_shape(lambda u: u, value(a))  # noqa: E731
        if "error" in rec:
            with pytest.raises(expect_error(rec)):
                thunk()
            return
        got = thunk()
        if kind == "abstractify":
            _check_aval(rec, got, kind)
        else:
            assert dtype_name(got) == rec["dtype"], (
                f"{rec['name']} (x64={rec['x64']}): {dtype_name(got)}, JAX {rec['dtype']}")


def test_promotion_records_are_complete() -> None:
    """The exhaustive tests above see every pair, in both x64 modes."""
    for x64 in (False, True):
        assert {(a, b) for a, b, flag in ADD if flag == x64} == {
            (a, b) for a in INPUTS for b in INPUTS}
        pairs = {(r["lhs"], r["rhs"]) for r in RECORDS
                 if r["kind"] == "promote_types" and r["x64"] == x64}
        assert pairs == {(a, b) for a in STRONG for b in STRONG}


# ---------------------------------------------------------------------------------------------
# (a') the same promotion through other standard-promotion ops, random shapes
# ---------------------------------------------------------------------------------------------

#: binary jnp functions whose result type is the standard promotion of their inputs
SAME_AS_ADD = {"add": jnp.add, "multiply": jnp.multiply, "maximum": jnp.maximum,
               "minimum": jnp.minimum, "operator.mul": lambda x, y: x * y}


@settings(max_examples=50, deadline=None)
@given(a=st.sampled_from(INPUTS), b=st.sampled_from(INPUTS), x64=st.booleans(),
       op=st.sampled_from(sorted(SAME_AS_ADD)), shapes=hnp.mutually_broadcastable_shapes(
           num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3),
       jit=st.booleans())
def test_promotion_in_binary_ops(a: str, b: str, x64: bool, op: str, shapes: Any,
                                 jit: bool) -> None:
    rec = ADD[(a, b, x64)]
    assume("error" not in rec)
    # two Python scalars multiply in Python unless traced
    assume(not (a in WEAK and b in WEAK and op == "operator.mul" and not jit))
    fn = SAME_AS_ADD[op]
    (sa, sb), _ = shapes
    with x64_mode(x64):
        x = value(a) if a in WEAK else jnp.asarray(value(a, sa))
        y = value(b) if b in WEAK else jnp.asarray(value(b, sb))
        out = pyjax.jit(fn)(x, y) if jit else fn(x, y)
        _check_aval(rec, out, f"{op}, shapes {np.shape(x)} {np.shape(y)}, jit={jit}")
        assert out.shape == np.broadcast_shapes(np.shape(x), np.shape(y))


# ---------------------------------------------------------------------------------------------
# (b) broadcasting against NumPy
# ---------------------------------------------------------------------------------------------

BCAST_DTYPES = ["bool", "int8", "uint8", "int32", "float16", "bfloat16", "float32"]
BCAST_OPS = {
    "add": (jnp.add, np.add), "subtract": (jnp.subtract, np.subtract),
    "multiply": (jnp.multiply, np.multiply), "maximum": (jnp.maximum, np.maximum),
    "minimum": (jnp.minimum, np.minimum), "equal": (jnp.equal, np.equal),
    "greater": (jnp.greater, np.greater), "operator.add": (lambda x, y: x + y, np.add),
}
TOL = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 1e-6}


def _draw(rng: np.random.Generator, shape: tuple[int, ...], name: str) -> np.ndarray:
    if name == "bool":
        return rng.random(shape) < 0.5
    if name in ("int8", "uint8", "int32"):
        return rng.integers(0 if name == "uint8" else -9, 10, size=shape).astype(name)
    return rng.uniform(-4, 4, size=shape).astype(np_dtype(name))


@settings(max_examples=60, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4,
                                                min_side=0, max_side=4),
       a=st.sampled_from(BCAST_DTYPES), b=st.sampled_from(BCAST_DTYPES),
       op=st.sampled_from(sorted(BCAST_OPS)), seed=st.integers(0, 2**16), jit=st.booleans())
def test_broadcasting_matches_numpy(shapes: Any, a: str, b: str, op: str, seed: int,
                                    jit: bool) -> None:
    (sa, sb), result_shape = shapes
    assume(not (op == "subtract" and a == b == "bool"))  # JAX rejects bool - bool
    rng = np.random.default_rng(seed)
    x, y = _draw(rng, sa, a), _draw(rng, sb, b)
    fn, np_fn = BCAST_OPS[op]
    out = (pyjax.jit(fn) if jit else fn)(jnp.asarray(x), jnp.asarray(y))
    assert out.shape == result_shape
    # JAX promotes the operands first, then computes in the promoted dtype
    promoted = ADD[(a, b, False)]["dtype"]
    boolean = op in ("equal", "greater")
    assert out.dtype == (np.dtype(bool) if boolean else np_dtype(promoted)), (op, a, b)
    wide = np.float64 if promoted not in ("bool", "int8", "uint8", "int32") else np.int64
    xw = x.astype(np_dtype(promoted)).astype(wide)
    yw = y.astype(np_dtype(promoted)).astype(wide)
    want = np_fn(xw, yw)
    if promoted == "bool" and not boolean:
        want = want.astype(bool)
    got = np.asarray(out)
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want.astype(got.dtype))
    else:
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=TOL[promoted],
                                   atol=TOL[promoted])


def _shape(max_rank: int = 3) -> Any:
    return st.lists(st.integers(0, 4), min_size=1, max_size=max_rank).map(tuple)


def _incompatible(sa: tuple, sb: tuple) -> bool:
    try:
        np.broadcast_shapes(sa, sb)
        return False
    except ValueError:
        return True


@settings(max_examples=40, deadline=None)
@given(sa=_shape(), sb=_shape(), op=st.sampled_from(["add", "multiply", "maximum", "equal",
                                                     "operator.add"]),
       jit=st.booleans())
def test_incompatible_shapes_raise(sa: tuple, sb: tuple, op: str, jit: bool) -> None:
    assume(_incompatible(sa, sb))
    fn = BCAST_OPS[op][0]
    x, y = jnp.zeros(sa, np.float32), jnp.zeros(sb, np.float32)
    # equal ranks: jnp leaves the shapes to lax, which raises TypeError; different ranks:
    # jnp's rank promotion calls lax.broadcast_shapes, which raises ValueError
    expected = TypeError if len(sa) == len(sb) else ValueError
    with pytest.raises(expected, match="ncompatible shapes for broadcasting"):
        (pyjax.jit(fn) if jit else fn)(x, y)
