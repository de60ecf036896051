"""lax's special functions and small elementwise ops against JAX 0.10.2
(tests/data/special.json, recorded by tests/oracle/record_special.py).

(1) values: pyjax on the very arrays JAX saw, eagerly and under jit, in ulps of JAX's answer;
(2) integer ops and bit manipulations bit for bit;
(3) make_jaxpr texts of derivatives and vmaps, and error classes and texts, byte for byte;
(4) derivatives against finite differences where JAX defines them.

Ulp tolerances.  pyjax runs XLA's algorithms step by step (its series, continued fractions,
Lanczos sums, Chebyshev series; float32 log/log1p as XLA's polynomials, multiply-adds fused as
XLA's CPU backend fuses them), but NumPy's exp/pow/sin differ from XLA's by up to an ulp and
some fused multiply-adds may differ.  So:
  * closed forms (Bessel, lgamma, digamma, polygamma): at most 4 ulps;
  * zeta sums powers (q + n)^-x: XLA's pow loses about |x log q| ulps / 4 more than NumPy's;
  * the incomplete gamma family is exp(a log x - x - lgamma(a)) times a series or continued
    fraction: an ulp of a term of size M in the exponent moves the result by M ulps, and each
    step of the sum adds rounding: 64 + 2 K ulps with K = |a log x| + |x| + |lgamma(a)|;
    results near 1 are 1 - s, where an ulp of s is eps/2: 4 eps absolute is allowed too; the
    a-derivatives (ans d log(ax)/da + d ans/da) cancel partly: 128 + 2 K ulps;
  * betainc is exp(a log x + b log1p(-x) - log B(a, b)) times a continued fraction: likewise
    64 + 2 K ulps, K the sum of those terms' magnitudes (log B through its three lgammas),
    or 4 eps absolute;
  * float16/bfloat16 results are computed in float32 and rounded: 2 ulps of the narrow type
    (a float32 ulp off can flip the final rounding, as can double rounding).
  Integer ops, reduce_precision, nextafter, erf_inv and reciprocal must match bit for bit.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import scipy.special as sps

import pyjax
from pyjax import lax
from pyjax.test_util import check_grads

from op_table import x64_mode
from recorded import check_jaxpr, tracer_error_normalizer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "oracle"))
import record_special  # noqa: E402

DATA = json.load(open(os.path.join(HERE, "data", "special.json")))
DTYPES = {"float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16),
          "float32": np.dtype(np.float32), "float64": np.dtype(np.float64),
          **{n: np.dtype(n) for n in ("int8", "int16", "int32", "int64", "uint8", "uint16",
                                      "uint32", "uint64")}}


def _unbits(hexes: list[str], dtype: np.dtype) -> np.ndarray:
    return np.array([int(h, 16) for h in hexes], f"u{dtype.itemsize}").view(dtype)


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in representable values (0 where both are nan)."""
    def ordinal(x: np.ndarray) -> np.ndarray:
        i = x.view(f"i{x.dtype.itemsize}").astype(np.int64)
        return np.where(i < 0, -(i & ((1 << (8 * x.dtype.itemsize - 1)) - 1)), i)
    nan_g, nan_w = np.isnan(got.astype(np.float64)), np.isnan(want.astype(np.float64))
    d = np.abs(ordinal(got) - ordinal(want)).astype(np.float64)
    return np.where(nan_g & nan_w, 0, np.where(nan_g | nan_w, np.inf, d))


def _lgamma_abs(a: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.abs(sps.gammaln(a))


def _allowed(fn: str, dtype: str, args: list[np.ndarray], want: np.ndarray
             ) -> tuple[np.ndarray, float]:
    """(ulps, absolute error) allowed per element (see the module docstring)."""
    wide = [np.nan_to_num(a.astype(np.float64), nan=0.0, posinf=1e300, neginf=-1e300)
            for a in args]
    eps = float(np.finfo(np.float32 if dtype != "float64" else np.float64).eps)
    if dtype in ("float16", "bfloat16"):
        return np.full(want.shape, 2.0), 0.0
    with np.errstate(all="ignore"):
        if fn in ("igamma", "igammac", "igamma_grad_a", "random_gamma_grad"):
            a, x = wide
            k = np.abs(a * np.log(np.abs(x) + 1e-300)) + np.abs(x) + _lgamma_abs(a)
            base = 64 if fn in ("igamma", "igammac") else 128
            return base + 2 * np.minimum(np.nan_to_num(k, nan=1e6), 1e6), 4 * eps
        if fn == "betainc":
            a, b, x = wide
            k = (np.abs(a * np.log(np.abs(x) + 1e-300)) + np.abs(b * np.log1p(-np.minimum(x, 1)))
                 + _lgamma_abs(a) + _lgamma_abs(b) + _lgamma_abs(a + b))
            return 64 + 2 * np.minimum(np.nan_to_num(k, nan=1e6), 1e6), 4 * eps
        if fn == "zeta":
            x, q = wide
            k = np.abs(x * np.log(np.abs(q) + 1e-300))
            return 4 + np.minimum(np.nan_to_num(k, nan=1e6), 1e6) / 4, 0.0
    if fn in ("bessel_i0e", "bessel_i1e", "lgamma", "digamma", "polygamma"):
        return np.full(want.shape, 4.0), 0.0
    return np.zeros(want.shape), 0.0


def _value_records() -> list[Any]:
    return [pytest.param(r, id=f"{r['name']}-{r['dtype']}") for r in DATA["values"]]


def _call(fn: str, params: dict, args: list[np.ndarray], jit: bool) -> np.ndarray:
    f = lambda *a: record_special.call(lax, fn, params, a)  # noqa: E731
    return np.asarray(pyjax.jit(f)(*args) if jit else f(*args))


@pytest.mark.parametrize("rec", _value_records())
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_values_match_jax(rec: dict, jit: bool) -> None:
    dtype = DTYPES[rec["dtype"]]
    args = [_unbits(h, dtype) for h in rec["inputs"]]
    with x64_mode(rec["x64"]):
        got = _call(rec["fn"], rec["params"], args, jit)
    assert str(got.dtype) == rec["out_dtype"]
    want = _unbits(rec["output"], got.dtype)
    if got.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want, err_msg=rec["name"])
        return
    ulps, atol = _allowed(rec["fn"], rec["dtype"], args, want)
    with np.errstate(invalid="ignore"):  # inf - inf
        close = np.abs(got.astype(np.float64) - want.astype(np.float64)) <= atol
    bad = ~((_ulps(got, want) <= ulps) | close)
    assert not bad.any(), (
        f"{rec['name']} {rec['dtype']}: {int(bad.sum())} of {bad.size} beyond tolerance, e.g. "
        f"inputs {[float(a[bad][0]) for a in args]}: pyjax {float(got[bad][0])!r}, "
        f"JAX {float(want[bad][0])!r} ({_ulps(got, want)[bad][0]} ulps)")


# ---------------------------------------------------------------------------------------------
# jaxprs and errors
# ---------------------------------------------------------------------------------------------

JAXPR_CASES = {name: (fn, args) for name, fn, args in
               record_special.jaxpr_cases(pyjax, pyjax.numpy, lax, np)}


#: recorded cases (name, with x64) pyjax does not reproduce yet, with the reason
_KNOWN = {
    ("jvp_population_count", False): "pyjax.jvp does not accept float0 tangents",
    ("jvp_clz", False): "pyjax.jvp does not accept float0 tangents",
}
KNOWN_DIFFERENCES = {**_KNOWN, ("jvp_population_count", True): _KNOWN[
    ("jvp_population_count", False)], ("jvp_clz", True): _KNOWN[("jvp_clz", False)]}


def _jaxpr_records() -> list[Any]:
    return [pytest.param(r, id=f"{r['name']}-{'x64' if r['x64'] else 'x32'}",
                         marks=[pytest.mark.xfail(reason=KNOWN_DIFFERENCES[r["name"], r["x64"]],
                                                  strict=True)]
                         if (r["name"], r["x64"]) in KNOWN_DIFFERENCES else [])
            for r in DATA["jaxprs"]]


@pytest.mark.parametrize("rec", _jaxpr_records())
def test_jaxprs_and_errors_match_jax(rec: dict) -> None:
    fn, args = JAXPR_CASES[rec["name"]]
    with x64_mode(rec["x64"]):
        check_jaxpr(fn, args, rec, tracer_error_normalizer(rec))


# ---------------------------------------------------------------------------------------------
# derivatives
# ---------------------------------------------------------------------------------------------

A = np.array([0.7, 1.5, 3.0, 6.0])
X = np.array([0.4, 2.0, 2.5, 9.0])


def test_igamma_derivatives(x64: Any) -> None:
    """d/dx by the density (order 2); d/da through igamma_grad_a, which has no derivative."""
    check_grads(lambda x: lax.igamma(A, x), (X,), order=2, modes=("fwd", "rev"))
    check_grads(lambda x: lax.igammac(A, x), (X,), order=2, modes=("fwd", "rev"))
    check_grads(lambda a: lax.igamma(a, X), (A,), order=1, modes=("fwd", "rev"))
    check_grads(lambda a: lax.igammac(a, X), (A,), order=1, modes=("fwd", "rev"))
    with pytest.raises(NotImplementedError, match="'igamma_grad_a' not implemented"):
        pyjax.grad(pyjax.grad(lambda a: lax.igamma(a, 2.0)))(1.5)


def test_betainc_derivative_in_x_only(x64: Any) -> None:
    b, x = np.array([0.9, 2.0, 4.0, 1.2]), np.array([0.2, 0.5, 0.7, 0.9])
    check_grads(lambda x: lax.betainc(A, b, x), (x,), order=2, modes=("fwd", "rev"))
    with pytest.raises(ValueError, match="with respect to a and b not supported"):
        pyjax.jvp(lambda a: lax.betainc(a, b, x), (A,), (np.ones(4),))


def test_undefined_derivatives_raise() -> None:
    for fn, args in ((lax.zeta, (2.5, 2.0)), (lax.igamma_grad_a, (1.5, 2.0)),
                     (lax.nextafter, (1.0, 2.0))):
        with pytest.raises(NotImplementedError, match="Differentiation rule for"):
            pyjax.grad(fn)(*args)
    # as in JAX, random_gamma_grad is lax operations around while loops (no primitive)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        pyjax.grad(lax.random_gamma_grad)(np.float32(1.5), np.float32(2.0))


def test_random_gamma_grad_is_the_quantile_derivative() -> None:
    """dx/da at a fixed CDF value equals -(dP/da) / (dP/dx)."""
    with x64_mode(True):
        got = np.asarray(lax.random_gamma_grad(A, X))
        density = np.exp((A - 1) * np.log(X) - X - sps.gammaln(A))
        want = -np.asarray(lax.igamma_grad_a(A, X)) / density
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_reduce_precision_rounds_its_tangent_too() -> None:
    """JAX's rule is linear: the tangent goes through the same rounding."""
    _, t = pyjax.jvp(lambda x: lax.reduce_precision(x, 5, 2), (np.float32(1.3),),
                     (np.float32(1.3),))
    assert float(t) == 1.25
