"""pyjax.ops segment reductions against JAX 0.10.2 (tests/data/ops_segment.json, recorded by
tests/oracle/record_ops_segment.py) and against NumPy loops in float64.

(1) recorded: make_jaxpr texts and errors byte for byte (x64 off and on), eager values with
    dtypes and weak types (float32 to 2e-6 relative: scatter order may round differently);
(2) a float64 NumPy reference over random ids, out-of-range ids dropped or clipped;
(3) derivatives against finite differences (order 2) and vmap against a loop.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import ops
from pyjax.test_util import check_grads

import recorded
from op_table import x64_mode

import record_ops_segment  # noqa: E402  (tests/oracle is on the path via recorded)

DATA = recorded.load("ops_segment.json")
RECORDS = recorded.by_name(DATA["records"])


def _cases(x64: bool) -> dict[str, tuple]:
    with x64_mode(x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {n: (f, a, t) for n, f, a, t in
                record_ops_segment.cases(pyjax, jnp, pyjax.lax, np)}


CASES = {False: _cases(False), True: _cases(True)}
#: recorded outputs pyjax does not reproduce, for reasons outside jax.ops (strict xfails)
_KIND_NAMES = ("lax's dtype-kind errors name (signedinteger, unsignedinteger) where JAX names "
               "integer (pyjax/_src/primitives/_rules.py check_kinds)")
KNOWN_DIFFERENCES = {"sum_bool": _KIND_NAMES, "prod_bool": _KIND_NAMES}
PARAMS = [pytest.param(n, x64, id=f"{n}-{'x64' if x64 else 'x32'}",
                       marks=[pytest.mark.xfail(reason=KNOWN_DIFFERENCES[n], strict=True)]
                       if n in KNOWN_DIFFERENCES else [])
          for (n, x64) in RECORDS]


def _check_error(fn: Any, args: tuple, want: dict) -> None:
    with pytest.raises(Exception) as info:
        fn(*args)
    assert type(info.value).__name__ == want["type"]
    got, expected = str(info.value), want["message"]
    if want["type"] == "ConcretizationTypeError":  # names the caller's file and line
        got, expected = got.splitlines()[:2], expected.splitlines()[:2]
    assert got == expected


@pytest.mark.parametrize("name,x64", [p for p in PARAMS if CASES[False][p.values[0]][2]])
def test_jaxpr_matches_jax(name: str, x64: bool) -> None:
    record = RECORDS[(name, x64)]
    fn, args, _ = CASES[x64][name]
    with x64_mode(x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "error" in record:
            _check_error(pyjax.make_jaxpr(fn), args, record["error"])
        else:
            got = str(pyjax.make_jaxpr(fn)(*args))
            assert got == record["jaxpr"], f"\n--- pyjax\n{got}\n--- JAX\n{record['jaxpr']}"


def _close(got: Any, want: Any) -> None:
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
        return
    assert (got["dtype"], got["weak_type"], got["shape"]) == (
        want["dtype"], want["weak_type"], want["shape"])
    g, w = np.array(got["values"], np.float64), np.array(want["values"], np.float64)
    tol = {"float64": 1e-13, "complex128": 1e-13, "float16": 1e-3}.get(want["dtype"], 2e-6)
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


@pytest.mark.parametrize("name,x64", PARAMS)
def test_eager_value_matches_jax(name: str, x64: bool) -> None:
    record = RECORDS[(name, x64)]
    fn, args, _ = CASES[x64][name]
    with x64_mode(x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "eager_error" in record:
            _check_error(fn, args, record["eager_error"])
        else:
            _close(record_ops_segment.value_of(fn(*args), np), record["value"])


# ---------------------------------------------------------------------------------------------
# (2) float64 references
# ---------------------------------------------------------------------------------------------

_NP = {"sum": (np.add, 0.0), "prod": (np.multiply, 1.0), "max": (np.maximum, -np.inf),
       "min": (np.minimum, np.inf)}


def _reference(op: str, data: np.ndarray, ids: np.ndarray, n: int, clip: bool) -> np.ndarray:
    ufunc, init = _NP[op]
    out = np.full((n,) + data.shape[1:], init)
    for row, i in zip(data, ids):
        if clip:
            i = min(max(i, 0), n - 1)
        if 0 <= i < n:
            out[i] = ufunc(out[i], row)
    return out


@pytest.mark.parametrize("op", list(_NP))
@pytest.mark.parametrize("clip", [False, True])
@pytest.mark.parametrize("bucket_size", [None, 1, 4])
def test_against_numpy_float64(op: str, clip: bool, bucket_size: Any) -> None:
    rng = np.random.default_rng(3)
    data = rng.uniform(0.5, 1.5, size=(23, 2))
    ids = rng.integers(-2, 9, size=23)
    with x64_mode(True):
        got = getattr(ops, f"segment_{op}")(data, ids, 7, bucket_size=bucket_size,
                                            mode="clip" if clip else None)
    assert got.dtype == np.float64
    np.testing.assert_allclose(np.asarray(got), _reference(op, data, ids, 7, clip),
                               rtol=1e-13)


def test_default_num_segments_is_max_id_plus_one() -> None:
    assert ops.segment_sum(jnp.ones(4), jnp.array([0, 5, 1, 5])).shape == (6,)


# ---------------------------------------------------------------------------------------------
# (3) transformations
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_grads_numerically(op: str) -> None:
    ids = np.array([0, 2, 2, 1, 0, 3])
    x = np.array([0.3, -1.2, 0.7, 2.1, -0.4, 1.1])  # no ties inside a segment
    f = getattr(ops, f"segment_{op}")
    with x64_mode(True):
        check_grads(lambda d: f(d, ids, 4), (x,), order=2)


def test_prod_grads_numerically_with_unique_ids() -> None:
    with x64_mode(True):
        check_grads(lambda d: ops.segment_prod(d, np.array([2, 0, 1]), 4, unique_indices=True),
                    (np.array([0.3, -1.2, 0.7]),), order=2)


@pytest.mark.parametrize("op", list(_NP))
def test_vmap_equals_loop(op: str) -> None:
    rng = np.random.default_rng(4)
    data = rng.normal(size=(3, 6)).astype(np.float32)
    ids = rng.integers(0, 4, size=(3, 6)).astype(np.int32)
    f = getattr(ops, f"segment_{op}")
    got = pyjax.vmap(lambda d, s: f(d, s, 4))(data, ids)
    want = np.stack([np.asarray(f(d, s, 4)) for d, s in zip(data, ids)])
    np.testing.assert_array_equal(np.asarray(got), want)
