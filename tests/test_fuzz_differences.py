"""The fuzz suite's table of known JAX-vs-NumPy differences (fuzz_strategies.KNOWN_DIFFERENCES),
checked against JAX 0.10.2's recorded answers (tests/data/fuzz.json, written by
tests/oracle/record_fuzz.py): pyjax reproduces each example exactly, and NumPy really does
answer differently (so no entry lists a difference that is not one).  Also every recorded
result dtype / weak type / error class of the fuzzed unary and binary functions."""
from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from fuzz_strategies import (KNOWN_DIFFERENCES, REGRESSIONS, UNREPRODUCED, describe,
                             kind_example, load_recorded, np_dtype, record_expression)

RECORDED = load_recorded()
EXAMPLES = [(name, i, pair) for name, diff in KNOWN_DIFFERENCES.items()
            for i, pair in enumerate(diff.examples)]


def _same(a: dict, b: dict) -> bool:
    """Two encoded results are identical (NaN equal to NaN)."""
    if "error" in a or "error" in b:
        return a == b
    return (a["shape"], a["dtype"]) == (b["shape"], b["dtype"]) and np.array_equal(
        np.asarray(a["values"], float), np.asarray(b["values"], float), equal_nan=True)


@pytest.mark.parametrize("name, i, pair", EXAMPLES, ids=[f"{n}:{i}" for n, i, _ in EXAMPLES])
def test_known_difference(name, i, pair):
    jax_expr, numpy_expr = pair
    want = RECORDED["differences"][f"{name}:{i}"]
    got = record_expression(jax_expr, jnp, pyjax, np)
    if name in UNREPRODUCED:
        assert not _same(got, want), f"{name} is reproduced now: drop it from UNREPRODUCED"
        pytest.xfail(KNOWN_DIFFERENCES[name].doc)
    assert _same(got, want), (got, want)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        numpy_answer = record_expression(numpy_expr, np, None, np)
    assert _differs(numpy_answer, want), f"{name}: NumPy agrees with JAX on {numpy_expr}"


def _differs(numpy_answer: dict, want: dict) -> bool:
    """NumPy raised, or its shape, dtype (weak marks aside) or values differ from JAX's."""
    if "error" in numpy_answer or "error" in want:
        return numpy_answer.get("error") != want.get("error")
    return (numpy_answer["shape"] != want["shape"]
            or numpy_answer["dtype"].rstrip("*") != want["dtype"].rstrip("*")
            or not np.array_equal(np.asarray(numpy_answer["values"], float),
                                  np.asarray(want["values"], float), equal_nan=True))


def test_every_difference_has_examples():
    assert all(d.examples and d.doc for d in KNOWN_DIFFERENCES.values())


@pytest.mark.parametrize("op", sorted({k.split("(")[0] for k in RECORDED["dtypes"]}))
def test_result_dtypes(op):
    """pyjax's result dtype and weak type (or error class) of `op` for every recorded input
    kind equals JAX's, via eval_shape (the same rules the eager and jit paths use)."""
    fn = getattr(jnp, op)
    bad = []
    for key, want in RECORDED["dtypes"].items():
        if key.split("(")[0] != op:
            continue
        kinds = key[len(op) + 1:-1].split(",")
        try:
            out = pyjax.eval_shape(fn, *(kind_example(k) for k in kinds))
            outs = out if isinstance(out, tuple) else (out,)
            got: object = [describe(o.dtype, o.weak_type) for o in outs]
        except Exception as e:  # noqa: BLE001 - compared with JAX's class
            got = "!" + type(e).__name__
        if got != want:
            bad.append((key, got, want))
    assert not bad, bad[:10]


def test_result_dtypes_with_scalar_operands():
    """Where 0-d operands make JAX take another path (recorded eagerly), pyjax does too."""
    bad = []
    for key, want in RECORDED["scalar_dtypes"].items():
        call, ranks = key.split("|")
        op = call.split("(")[0]
        kinds = call[len(op) + 1:-1].split(",")
        shapes = [(2,) if r == "1" else () for r in ranks.split(",")]
        try:
            out = getattr(jnp, op)(*(kind_example(k, s) for k, s in zip(kinds, shapes)))
            outs = out if isinstance(out, tuple) else (out,)
            got: object = [describe(o.dtype, o.weak_type) for o in outs]
        except Exception as e:  # noqa: BLE001 - compared with JAX's class
            got = "!" + type(e).__name__
        if got != want:
            bad.append((key, got, want))
    assert not bad, bad[:10]


@pytest.mark.parametrize("expr", REGRESSIONS)
def test_regressions(expr):
    """Bugs the fuzzing found: pyjax now gives JAX's recorded answer (floats within 2 ulp:
    jit's fused multiply-adds may round differently from XLA's)."""
    got, want = record_expression(expr, jnp, pyjax, np), RECORDED["regressions"][expr]
    assert (got["shape"], got["dtype"]) == (want["shape"], want["dtype"]), (got, want)
    dtype = np_dtype(want["dtype"].rstrip("*"))
    g, w = (np.asarray(v["values"], np.float64) for v in (got, want))
    if dtype.kind in "biu":
        np.testing.assert_array_equal(g, w)
    else:
        eps = float(ml_dtypes.finfo(dtype if dtype.kind != "c" else np.float32).eps)
        np.testing.assert_allclose(g, w, rtol=2 * eps, atol=0)
