"""pyjax.scipy.stats against JAX 0.10.2 and SciPy.

(1) elementwise values on grids (tails, out-of-support points, +-inf, nan, invalid
    parameters) against JAX's recorded float32 and float64 bit patterns
    (tests/data/scipy_stats_values.json), in ulps (see `_allowed`);
(2) the same grids, restricted to valid parameters, against scipy.stats in float64;
(3) make_jaxpr texts, eager values and error texts of sample calls, and of mode, rankdata,
    sem, dirichlet, multinomial, multivariate_normal, gaussian_kde and poisson.entropy
    (tests/data/scipy_stats.json), both recorded by tests/oracle/record_scipy_stats.py;
(4) derivatives of the log densities in x and in the parameters (numerical, order 2);
(5) vmap against the broadcast call.
"""
from __future__ import annotations

import dataclasses
import importlib
from typing import Callable

import numpy as np
import pytest
import scipy.special as sps
import scipy.stats as sst

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.scipy import stats
from pyjax.test_util import check_grads

from op_table import x64_mode
from recorded import check_value, load, record_id

import record_scipy_stats as recorder

VALUES = load("scipy_stats_values.json")["records"]
CASES = load("scipy_stats.json")["records"]


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in representable values; 0 where both are nan or equal infinities."""
    def ordinal(x: np.ndarray) -> np.ndarray:
        i = x.view(f"i{x.dtype.itemsize}").astype(np.int64)
        return np.where(i < 0, -(i & ((1 << (8 * x.dtype.itemsize - 1)) - 1)), i)
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    d = np.abs(ordinal(got) - ordinal(want)).astype(np.float64)
    return np.where(nan_g & nan_w, 0, np.where(nan_g | nan_w, np.inf, d))


# ---------------------------------------------------------------------------------------------
# (1) grid values against JAX
# ---------------------------------------------------------------------------------------------

#: functions computed from XLA's incomplete gamma / beta (series and continued fractions
#: whose float32 roundings pyjax follows step by step, but through NumPy's exp and log): as in
#: tests/test_lax_special.py
_INCOMPLETE = {"gamma.cdf", "gamma.sf", "gamma.logcdf", "gamma.logsf", "chi2.cdf", "chi2.sf",
               "chi2.logcdf", "chi2.logsf", "beta.cdf", "beta.sf", "beta.logcdf", "beta.logsf",
               "gennorm.cdf", "poisson.cdf"}


def _lg(v: np.ndarray) -> np.ndarray:
    return np.abs(sps.gammaln(v))


def _xlog(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.abs(a * np.log(np.abs(y)))


#: per distribution, the size of the largest terms a log density sums (float64, from the
#: arguments): the result's error is an ulp or two of them
_TERMS: dict[str, Callable[..., np.ndarray]] = {
    "t": lambda x, df, loc, s: (_lg(df / 2) + _lg(df / 2 + 0.5)
                                + _xlog(df / 2 + 0.5, 1 + ((x - loc) / s) ** 2 / df)),
    "gamma": lambda x, a, loc, s: _lg(a) + np.abs((x - loc) / s) + _xlog(a - 1, (x - loc) / s),
    "chi2": lambda x, df, loc, s: (_lg(df / 2) + np.abs(df) + np.abs((x - loc) / s)
                                   + _xlog(df / 2 - 1, (x - loc) / s)),
    "beta": lambda x, a, b, loc, s: (_lg(a) + _lg(b) + _lg(a + b) + _xlog(a - 1, (x - loc) / s)
                                     + _xlog(b - 1, 1 - (x - loc) / s)),
    "binom": lambda k, n, p, loc: (_lg(n + 1) + _lg(k + 1) + _lg(n - k + 1) + _xlog(k, p)
                                   + _xlog(n - k, 1 - p)),
    "nbinom": lambda k, n, p, loc: (_lg(k + n) + _lg(n) + _lg(k + 1) + _xlog(n, p)
                                    + _xlog(k, 1 - p)),
    "betabinom": lambda k, n, a, b, loc: (_lg(n + 2) + _lg(k + a) + _lg(n - k + b) + _lg(a + b)
                                          + _lg(n + a + b) + _lg(a) + _lg(b)),
    "poisson": lambda k, mu, loc: _xlog(k, mu) + _lg(k + 1) + np.abs(mu),
    # (by function) log1p(-exp(-y)) near y = 0: an ulp of exp(-y) is 1 / y ulps of
    # 1 - exp(-y)
    "expon.logcdf": lambda x, loc, s: 1 / np.abs(np.expm1(-(x - loc) / s)),
    # sf = 1 - exp(-t), t = exp(-z): likewise 1 / t ulps
    "gumbel_r.sf": lambda x, loc, s: 1 / np.abs(np.expm1(-np.exp(-(x - loc) / s))),
}


def _allowed(name: str, args: list[np.ndarray], want: np.ndarray
             ) -> tuple[float, np.ndarray]:
    """(ulps, absolute error) allowed per element.

    JAX evaluates exp, log, log1p, tan, atan, pow, lgamma with XLA's CPU kernels, pyjax with
    NumPy's or XLA's algorithms in NumPy: each step may differ by an ulp or two, so formulas
    of a few steps agree within 8 ulps, and within 64 where an exponential amplifies its
    argument's rounding (or, for truncnorm, log-space differences of Gaussian masses cancel),
    256 for the incomplete gamma / beta family.  Where a result sums terms of size M (lgammas
    of large parameters, x log y) that cancel, an ulp of M is many ulps of the result: an
    absolute error of 8 eps (1 + |result| + M) is allowed, and for densities and
    probabilities exp(L) a relative one of 8 eps (1 + |L| + M).
    """
    dist, fn = name.split(".")
    eps = float(np.finfo(want.dtype).eps)
    wide = [a.astype(np.float64) for a in args]
    with np.errstate(all="ignore"):
        term_fn = _TERMS.get(name, _TERMS.get(dist))
        terms = (np.zeros(want.shape) if term_fn is None
                 else np.nan_to_num(term_fn(*wide), nan=0.0, posinf=0.0))
        w = want.astype(np.float64)
        if fn in ("pdf", "pmf", "cdf", "sf"):
            atol = 8 * eps * np.abs(w) * (1 + np.abs(np.log(np.abs(w))) + terms)
        else:
            atol = 8 * eps * (1 + np.abs(w) + terms)
    ulps = (256.0 if name in _INCOMPLETE
            else 64.0 if fn in ("pdf", "pmf", "cdf", "sf") or dist == "truncnorm" else 8.0)
    return ulps, np.nan_to_num(atol, nan=0.0)


def _grid_params() -> list:
    return [pytest.param(rec, id=record_id(rec)) for rec in VALUES]


_CALLS = {name: (dist, fn, axes) for name, dist, fn, axes in recorder.value_cases()}


def _grid_args(rec: dict) -> list[np.ndarray]:
    dist, fn, axes = _CALLS[rec["name"]]
    dtype = np.dtype(rec["dtype"])
    return [a.astype(dtype) for a in recorder.grid(axes, np, rec["x64"])]


@pytest.mark.parametrize("rec", _grid_params())
def test_grid_values_match_jax(rec: dict) -> None:
    dist, fn, _ = _CALLS[rec["name"]]
    args = _grid_args(rec)
    dtype = np.dtype(rec["dtype"])
    want = np.array([int(h, 16) for h in rec["output"]], f"u{dtype.itemsize}").view(dtype)
    with x64_mode(rec["x64"]):
        got = np.asarray(recorder.call_stats(stats, dist, fn, args))
    assert got.dtype == dtype
    ulps, atol = _allowed(rec["name"], args, want)
    with np.errstate(invalid="ignore"):
        close = np.abs(got.astype(np.float64) - want.astype(np.float64)) <= atol
    # XLA flushes results below the normal range to zero (exp(z) of a large negative z is 0
    # there, and its log -inf); pyjax's NumPy keeps the subnormal
    tiny, least = np.finfo(dtype).tiny, np.finfo(dtype).smallest_subnormal
    with np.errstate(invalid="ignore"):
        flushed = (((want == -np.inf) & (got < np.log(tiny)) & (got >= np.log(least) - 1))
                   | ((want == 0) & (np.abs(got) < tiny)))
    bad = ~((_ulps(got, want) <= ulps) | close | flushed)
    assert not bad.any(), (
        f"{rec['name']} {dtype}: {int(bad.sum())} of {bad.size} beyond tolerance, e.g. inputs "
        f"{[float(a[bad][0]) for a in args]}: pyjax {float(got[bad][0])!r}, JAX "
        f"{float(want[bad][0])!r} ({_ulps(got, want)[bad][0]} ulps)")


@pytest.mark.parametrize("name", ["norm.logcdf", "gamma.cdf", "truncnorm.logsf",
                                  "betabinom.logpmf", "gumbel_r.logsf", "poisson.cdf"])
def test_grid_values_under_jit_match_eager(name: str) -> None:
    """The same functions staged and compiled: within a few ulps of the eager results."""
    dist, fn, axes = _CALLS[name]
    args = [a.astype(np.float32) for a in recorder.grid(axes, np)]
    f = lambda *a: recorder.call_stats(stats, dist, fn, a)  # noqa: E731
    eager, jitted = np.asarray(f(*args)), np.asarray(pyjax.jit(f)(*args))
    assert (_ulps(jitted, eager) <= 4).all()


# ---------------------------------------------------------------------------------------------
# (2) against SciPy in float64
# ---------------------------------------------------------------------------------------------

#: the parameters' valid domains (by distribution, the positional parameters after x): SciPy
#: answers nan outside them where JAX computes the formula anyway (those cases are compared
#: with JAX's recorded values above)
def _valid(dist: str, p: list[np.ndarray]) -> np.ndarray:
    def integer(v: np.ndarray) -> np.ndarray:
        return v == np.round(v)
    conds = {
        "norm": lambda: p[1] > 0, "cauchy": lambda: p[1] > 0, "laplace": lambda: p[1] > 0,
        "logistic": lambda: p[1] > 0, "uniform": lambda: p[1] > 0, "expon": lambda: p[1] > 0,
        "gumbel_l": lambda: p[1] > 0, "gumbel_r": lambda: p[1] > 0,
        "pareto": lambda: (p[0] > 0) & (p[2] > 0), "t": lambda: (p[0] > 0) & (p[2] > 0),
        "gamma": lambda: (p[0] > 0) & (p[2] > 0), "chi2": lambda: (p[0] > 0) & (p[2] > 0),
        "beta": lambda: (p[0] > 0) & (p[1] > 0) & (p[3] > 0),
        "gennorm": lambda: p[0] > 0, "vonmises": lambda: p[0] > 0,
        "wrapcauchy": lambda: (p[0] > 0) & (p[0] < 1),
        "truncnorm": lambda: (p[0] < p[1]) & (p[3] > 0),
        "bernoulli": lambda: (p[0] >= 0) & (p[0] <= 1),
        "binom": lambda: (p[0] >= 0) & integer(p[0]) & (p[1] >= 0) & (p[1] <= 1),
        "nbinom": lambda: (p[0] > 0) & (p[1] > 0) & (p[1] <= 1),
        "geom": lambda: (p[0] > 0) & (p[0] <= 1),
        "poisson": lambda: p[0] >= 0,
        "betabinom": lambda: (p[0] >= 0) & integer(p[0]) & (p[1] > 0) & (p[2] > 0),
    }
    return conds[dist]()


#: points where JAX 0.10.2's formulas knowingly differ from SciPy's answers (pyjax follows JAX;
#: the recorded JAX values above cover them)
def _jax_differs(name: str, x: np.ndarray, p: list[np.ndarray]) -> np.ndarray:
    dist, fn = name.split(".")
    skip = np.zeros(x.shape, bool)
    if dist in ("binom", "nbinom", "geom", "bernoulli", "betabinom"):
        skip |= x != np.round(x)  # JAX evaluates the mass formula between the integers
    if fn in ("ppf", "isf") and dist in ("bernoulli", "cauchy", "gumbel_l", "gumbel_r"):
        skip |= (x == 0) | (x == 1)  # JAX: tan(pi/2) is finite, 0 for q = 0, nan at the ends
    if fn in ("ppf", "isf") and dist == "cauchy":
        skip |= (x < 0) | (x > 1)  # JAX takes the tangent of any q
    if name in ("chi2.logpdf", "chi2.pdf"):
        skip |= np.isinf(x) | ((x == p[1]) & (p[0] == 2))  # inf - inf, 0 * log(0)
    return skip


def _scipy_call(name: str, args: list[np.ndarray]) -> np.ndarray:
    dist, fn = name.split(".")
    with np.errstate(all="ignore"):
        return np.asarray(getattr(getattr(sst, dist), fn)(*args), np.float64)


#: tolerances (relative, and absolute for log densities) beyond 1e-9 where JAX's formulas lose
#: accuracy SciPy keeps: betaln, written for float32 (TFP's algorithm), is good to about 1e-7
#: absolute in float64 (absolute errors of eps-sized terms, as log(1 - tiny) for log cdfs
#: near 0, stay below the 1e-13 allowed everywhere)
_SCIPY_TOL = {"betabinom": 1e-5, "beta": 2e-7}


@pytest.mark.parametrize("name", sorted(_CALLS))
def test_grid_values_match_scipy(name: str) -> None:
    dist, fn, axes = _CALLS[name]
    args = recorder.grid(axes, np)
    ok = _valid(dist, args[1:]) & ~_jax_differs(name, args[0], args[1:]) & ~np.isnan(args[0])
    args = [a[ok] for a in args]
    with x64_mode(True):
        got = np.asarray(recorder.call_stats(stats, dist, fn, args))
    want = _scipy_call(name, args)
    assert got.dtype == np.float64
    tol = _SCIPY_TOL.get(dist, 1e-9)
    np.testing.assert_allclose(got, want, rtol=tol, atol=max(tol, 1e-13), err_msg=name)


# ---------------------------------------------------------------------------------------------
# (4) derivatives
# ---------------------------------------------------------------------------------------------

X = np.array([0.35, 0.9, 2.2])
#: reverse-over-reverse only, for the slowest (jitted, many-step) functions
REV = ("rev",)
GRAD_CASES: list[tuple] = [
    ("norm.logpdf", stats.norm.logpdf, (X, 0.2, 1.3)),
    ("norm.logcdf", stats.norm.logcdf, (X - 3.0, 0.2, 1.3)),
    ("norm.cdf", stats.norm.cdf, (X, 0.2, 1.3)),
    ("norm.ppf", lambda q: stats.norm.ppf(q, 0.2, 1.3), (X / 3,)),
    ("cauchy.logpdf", stats.cauchy.logpdf, (X, 0.2, 1.3)),
    ("cauchy.logsf", stats.cauchy.logsf, (X, 0.2, 1.3)),
    ("laplace.logpdf", stats.laplace.logpdf, (X, 0.2, 1.3)),
    ("logistic.logpdf", stats.logistic.logpdf, (X, 0.2, 1.3)),
    ("logistic.cdf", stats.logistic.cdf, (X, 0.2, 1.3)),
    ("expon.logpdf", stats.expon.logpdf, (X, 0.2, 1.3)),
    ("expon.logcdf", stats.expon.logcdf, (X, 0.2, 1.3)),
    ("uniform.logpdf", stats.uniform.logpdf, (X, 0.2, 3.0)),
    ("gumbel_l.logcdf", stats.gumbel_l.logcdf, (X, 0.2, 1.3)),
    ("gumbel_r.logcdf", stats.gumbel_r.logcdf, (X, 0.2, 1.3)),
    ("gumbel_r.logsf", stats.gumbel_r.logsf, (X, 0.2, 1.3)),
    ("pareto.logpdf", stats.pareto.logpdf, (X + 1.5, 2.5, 0.1, 1.2)),
    ("pareto.logcdf", stats.pareto.logcdf, (X + 1.5, 2.5, 0.1, 1.2)),
    ("t.logpdf", stats.t.logpdf, (X, 3.5, 0.2, 1.3)),
    ("gamma.logpdf", stats.gamma.logpdf, (X, 2.5, 0.1, 1.3)),
    ("chi2.logpdf", stats.chi2.logpdf, (X, 3.5, 0.1, 1.3)),
    ("beta.logpdf", stats.beta.logpdf, (X / 3, 2.5, 1.7, 0.0, 1.2)),
    ("gennorm.logpdf", stats.gennorm.logpdf, (X, 1.7)),
    ("vonmises.logpdf", stats.vonmises.logpdf, (X, 2.5)),
    ("wrapcauchy.logpdf", stats.wrapcauchy.logpdf, (X, 0.4)),
    ("truncnorm.logpdf", lambda x, s: stats.truncnorm.logpdf(x, -1.0, 3.0, 0.1, s), (X, 1.3)),
    ("truncnorm.logpdf_ab", lambda a, b: stats.truncnorm.logpdf(X, a, b), (-1.0, 3.0), REV),
    ("truncnorm.logcdf", lambda x: stats.truncnorm.logcdf(x, -1.0, 3.0, 0.1, 1.3), (X,), REV),
    ("poisson.logpmf", lambda mu: stats.poisson.logpmf(np.array([0.0, 2.0, 5.0]), mu), (2.5,)),
    ("binom.logpmf", lambda p: stats.binom.logpmf(np.array([0.0, 2.0, 5.0]), 7.0, p), (0.3,)),
    ("nbinom.logpmf", lambda n, p: stats.nbinom.logpmf(np.array([0.0, 2.0, 5.0]), n, p),
     (3.5, 0.3)),
    ("geom.logpmf", lambda p: stats.geom.logpmf(np.array([1.0, 2.0, 5.0]), p), (0.3,)),
    ("bernoulli.logpmf", lambda p: stats.bernoulli.logpmf(np.array([0.0, 1.0]), p), (0.3,)),
    ("betabinom.logpmf", lambda a: stats.betabinom.logpmf(np.array([0.0, 2.0, 5.0]), 7.0, a,
                                                           2.5), (1.5,), REV),
    ("dirichlet.logpdf", stats.dirichlet.logpdf, (np.array([0.2, 0.3]),
                                                  np.array([1.5, 2.0, 0.7]))),
    ("multinomial.logpmf", lambda p: stats.multinomial.logpmf(np.array([1, 2, 3]), 6, p),
     (np.array([0.2, 0.3, 0.5]),)),
    ("multivariate_normal.logpdf",
     lambda x, m, a: stats.multivariate_normal.logpdf(x, m, a @ a.T + np.eye(3)),
     (np.array([[0.3, -1.0, 2.0], [1.0, 0.0, 0.5]]), np.array([0.1, -0.2, 0.4]),
      np.array([[1.0, 0.2, 0.0], [0.3, 0.5, 0.1], [0.0, -0.4, 0.8]]))),
]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_derivatives(case: tuple) -> None:
    """Forward and reverse derivatives, to order 2, in every argument (x64)."""
    _, fn, args, *modes = case
    with x64_mode(True):
        check_grads(fn, args, order=2, modes=modes[0] if modes else ("fwd", "rev"))


@pytest.mark.xfail(strict=True, reason="jnp's promotion does not reject float0 operands with "
                   "JAX's TypeError (it fails with a KeyError)")
@pytest.mark.parametrize("dist", ["gumbel_l", "gumbel_r"])
def test_gumbel_logpdf_has_no_derivative_as_in_jax(dist: str) -> None:
    """JAX 0.10.2's gumbel logpdfs call xlogy(-1, scale), whose custom derivative multiplies the
    integer -1's float0 tangent: their derivatives raise JAX's float0 TypeError."""
    with pytest.raises(TypeError, match="Called multiply with a float0 array"):
        pyjax.grad(getattr(stats, dist).logpdf)(0.5, 0.0, 1.3)


def test_gaussian_kde_derivatives() -> None:
    """The kde's density in the evaluation points and in the data (through the pytree)."""
    data = np.array([[0.1, -1.2, 0.8, 2.2, 1.1], [1.0, 0.4, -0.3, 0.9, 2.0]])
    pts = np.array([[0.0, 1.0], [0.5, 0.0]])
    with x64_mode(True):
        check_grads(lambda p: stats.gaussian_kde(data).logpdf(p), (pts,), order=2)
        check_grads(lambda d: stats.gaussian_kde(d).evaluate(pts), (data,), order=1)


# ---------------------------------------------------------------------------------------------
# (5) vmap
# ---------------------------------------------------------------------------------------------

P = np.array([0.5, 1.5, 4.0], np.float32)
VMAP_CASES: list[tuple[str, Callable, tuple]] = [
    ("norm.logpdf", stats.norm.logpdf, (P, P - 1.0, P)),
    ("gamma.cdf", stats.gamma.cdf, (P, P + 0.5)),
    ("beta.logpdf", stats.beta.logpdf, (P / 5, P, P + 1.0)),
    ("t.pdf", stats.t.pdf, (P, P, 0.5, P)),
    ("poisson.pmf", stats.poisson.pmf, (np.array([0.0, 2.0, 7.0], np.float32), P)),
    ("betabinom.logpmf", stats.betabinom.logpmf, (P.round(), 6.0, P, P)),
    ("truncnorm.logcdf", stats.truncnorm.logcdf, (P - 1.0, -P, P)),
    ("gumbel_r.logsf", stats.gumbel_r.logsf, (P, 0.3, P)),
    ("vonmises.logpdf", stats.vonmises.logpdf, (P, P)),
    ("poisson.entropy", stats.poisson.entropy, (np.array([0.5, 30.0, 400.0], np.float32),)),
]


@pytest.mark.parametrize("name,fn,args", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_matches_broadcast_call(name: str, fn: Callable, args: tuple) -> None:
    axes = tuple(0 if np.ndim(a) else None for a in args)
    got = pyjax.vmap(fn, in_axes=axes)(*args)
    np.testing.assert_allclose(np.asarray(got), np.asarray(fn(*args)), rtol=1e-6)


def test_vmap_of_array_statistics() -> None:
    """mode, rankdata, sem, dirichlet, multivariate_normal and gaussian_kde under vmap: the
    per-row results."""
    rows = np.array([[3.0, 1.0, 3.0, 2.0, 1.0, 3.0], [0.5, 0.5, 0.1, 0.9, 0.9, 0.2]],
                    np.float32)
    for fn in (lambda r: stats.mode(r)[0], lambda r: stats.mode(r)[1],
               lambda r: stats.rankdata(r, "average"), lambda r: stats.rankdata(r, "dense"),
               stats.sem, lambda r: stats.dirichlet.logpdf(r[:3] / r[:3].sum(), r[3:]),
               lambda r: stats.multivariate_normal.logpdf(r[:3], r[3:], np.eye(3) * 2.0),
               lambda r: stats.gaussian_kde(r).logpdf(np.array([0.0, 1.0], np.float32))):
        want = np.stack([np.asarray(fn(r)) for r in rows])
        np.testing.assert_allclose(np.asarray(pyjax.vmap(fn)(rows)), want, rtol=2e-6)


# ---------------------------------------------------------------------------------------------
# (3) recorded jaxprs, values and errors
# ---------------------------------------------------------------------------------------------

def _cases(x64: bool) -> dict[str, tuple]:
    with x64_mode(x64):
        return {name: (fn, args) for name, fn, args, *_ in
                recorder.jaxpr_cases(pyjax, jnp, lax, np)}


_CASE_FNS = {x64: _cases(x64) for x64 in (False, True)}

_SHARED_JAXPR = ("pyjax's jit cache hands two identical cumsum calls one jaxpr, printed once by "
                 "name; JAX traces each afresh and prints both inline")
#: recorded jaxprs pyjax does not print alike, for reasons outside jax.scipy.stats
KNOWN: dict[tuple[str, bool], str] = {
    **{(f"rankdata_{m}", x64): _SHARED_JAXPR for m in ("average", "min", "max", "nan")
       for x64 in (False, True)},
}
#: recorded values pyjax does not reproduce, for reasons outside jax.scipy.stats
KNOWN_VALUES: dict[tuple[str, bool], str] = {}



def _marks(rec: dict) -> list:
    key = (rec["name"], rec["x64"])
    if key in KNOWN:
        return [pytest.mark.xfail(reason=KNOWN[key], strict=True)]
    return []


def _jaxpr_params() -> list:
    return [pytest.param(rec, id=record_id(rec), marks=_marks(rec))
            for rec in CASES if "jaxpr" in rec or "error" in rec]


@pytest.mark.parametrize("rec", _jaxpr_params())
def test_jaxpr_matches_jax(rec: dict) -> None:
    fn, args = _CASE_FNS[rec["x64"]][rec["name"]]
    with x64_mode(rec["x64"]):
        if "error" in rec:
            with pytest.raises(Exception) as info:
                pyjax.make_jaxpr(fn)(*args)
            assert type(info.value).__name__ == rec["error"]["type"]
            assert str(info.value) == rec["error"]["message"]
        else:
            assert str(pyjax.make_jaxpr(fn)(*args)) == rec["jaxpr"]


def _case_value_params() -> list:
    return [pytest.param(rec, id=record_id(rec), marks=[pytest.mark.xfail(
                reason=KNOWN_VALUES[(rec["name"], rec["x64"])], strict=True)]
            if (rec["name"], rec["x64"]) in KNOWN_VALUES else []) for rec in CASES]


@pytest.mark.parametrize("rec", _case_value_params())
def test_value_matches_jax(rec: dict) -> None:
    fn, args = _CASE_FNS[rec["x64"]][rec["name"]]
    with x64_mode(rec["x64"]):
        if "value_error" in rec:
            with pytest.raises(Exception) as info:
                fn(*args)
            assert type(info.value).__name__ == rec["value_error"]["type"]
            assert str(info.value) == rec["value_error"]["message"]
        else:
            check_value(fn(*args), rec["value"])


def test_public_names_and_pytree() -> None:
    """Each distribution module holds JAX's functions; gaussian_kde is a pytree of its five
    arrays (so it passes through jit); mode returns JAX's named tuple."""
    for name, dist, fn, _ in recorder.value_cases():
        assert callable(getattr(importlib.import_module(f"pyjax.scipy.stats.{dist}"), fn)), name
    for dist, fns in (("dirichlet", ("logpdf", "pdf")), ("multinomial", ("logpmf", "pmf")),
                      ("multivariate_normal", ("logpdf", "pdf")), ("poisson", ("entropy",))):
        assert all(callable(getattr(getattr(stats, dist), f)) for f in fns)
    kde = stats.gaussian_kde(np.array([0.0, 1.0, 3.0, 4.5], np.float32))
    leaves, treedef = pyjax.tree_util.tree_flatten(kde)
    assert len(leaves) == 5
    again = pyjax.tree_util.tree_unflatten(treedef, leaves)
    assert isinstance(again, stats.gaussian_kde) and (again.d, again.n) == (1, 4)
    got = pyjax.jit(lambda k, p: k.logpdf(p))(kde, np.float32(1.0))
    np.testing.assert_allclose(np.asarray(got), np.asarray(kde.logpdf(1.0)), rtol=1e-6)
    with pytest.raises(dataclasses.FrozenInstanceError):
        kde.neff = 1.0  # type: ignore[misc]
    assert stats.mode(np.array([1, 1, 2]))._fields == ("mode", "count")
