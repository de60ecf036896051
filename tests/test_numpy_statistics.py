"""jnp statistics and NaN-ignoring reductions.

(1) against JAX 0.10.2 (tests/data/numpy_statistics.json, recorded by
    tests/oracle/record_numpy_statistics.py): make_jaxpr texts and error texts byte for byte,
    eager values (dtype, shape, values to float32 rounding), x64 off and on;
(2) against NumPy in float64: values, dtypes (weak types too), empty and 0-d shapes;
(3) derivatives (numerical, order 2) and vmap of the differentiable ones.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.test_util import check_grads

from op_table import x64_mode
from recorded import cases_under, check_value, load, record_id

import record_numpy_statistics as recorder

DATA = load("numpy_statistics.json")["records"]
_CASES = {x64: cases_under(recorder.statistics_cases, x64) for x64 in (False, True)}


def _first_lines(message: str) -> str:
    """An error text up to the generic lines of tracer errors (which name source files and
    differ in wording between make_jaxpr and jit: errors.py's business, not these functions')."""
    lines = message.split("\n")
    if lines[0].startswith("Abstract tracer value encountered"):
        return "\n".join(lines[:2])
    return message


#: differences owned elsewhere (each test still runs; it is marked xfail only if it differs)
KNOWN = {
    # convert_element_type folds NumPy arrays into constants while tracing; JAX folds only
    # scalars and stages the conversion of a closed-over NumPy mask
    **{("mean_where_const_mask", x64): "convert_element_type folds NumPy array constants"
       for x64 in (False, True)},
}


def _check_message(rec: dict, got: str, want: str) -> None:
    assert _first_lines(got) == _first_lines(want)


def _jaxpr_params() -> list:
    """Every record; the KNOWN ones as strict xfails (a fix elsewhere makes them pass, and then
    they must leave KNOWN)."""
    return [pytest.param(rec, id=record_id(rec), marks=[pytest.mark.xfail(
                reason=KNOWN[(rec["name"], rec["x64"])], strict=True)]
            if (rec["name"], rec["x64"]) in KNOWN else []) for rec in DATA]


@pytest.mark.parametrize("rec", _jaxpr_params())
def test_jaxpr_matches_jax(rec: dict) -> None:
    fn, args = _CASES[rec["x64"]][rec["name"]]
    with x64_mode(rec["x64"]):
        if "error" in rec:
            with pytest.raises(Exception) as info:
                pyjax.make_jaxpr(fn)(*args)
            assert type(info.value).__name__ == rec["error"]["type"]
            _check_message(rec, str(info.value), rec["error"]["message"])
        else:
            assert str(pyjax.make_jaxpr(fn)(*args)) == rec["jaxpr"]


@pytest.mark.parametrize("rec", DATA, ids=record_id)
def test_eager_and_jit_values_match_jax(rec: dict) -> None:
    fn, args = _CASES[rec["x64"]][rec["name"]]
    with x64_mode(rec["x64"]):
        if "value_error" in rec:
            with pytest.raises(Exception) as info:
                fn(*args)
            assert type(info.value).__name__ == rec["value_error"]["type"]
            _check_message(rec, str(info.value), rec["value_error"]["message"])
        else:
            check_value(fn(*args), rec["value"])
            if "jaxpr" in rec:  # traceable: the compiled program gives the same values
                check_value(pyjax.jit(fn)(*args), rec["value"])


def test_recording_covers_enough_functions() -> None:
    names = {rec["name"].split("_")[0] for rec in DATA if "jaxpr" in rec}
    assert len(names) >= 15 and {False, True} == {rec["x64"] for rec in DATA}


# ---------------------------------------------------------------------------------------------
# (2) against NumPy, float64 (x64 on)
# ---------------------------------------------------------------------------------------------

_RNG = np.random.RandomState(1)
X = _RNG.randn(4, 5)
XN = X.copy()
XN[0, 2] = XN[3, 0] = XN[3, 4] = np.nan
W5 = _RNG.rand(5) + 0.1
Q = np.array([0.0, 0.15, 0.5, 0.85, 1.0])

# (name, jnp function, NumPy function, args)
NUMPY_CASES = [
    ("nansum", lambda m, a: m.nansum(a, axis=1), XN),
    ("nanprod", lambda m, a: m.nanprod(a, axis=0, keepdims=True), XN),
    ("nanmax", lambda m, a: m.nanmax(a, axis=1), XN),
    ("nanmin", lambda m, a: m.nanmin(a), XN),
    ("nanmean", lambda m, a: m.nanmean(a, axis=0), XN),
    ("nanvar", lambda m, a: m.nanvar(a, axis=1, ddof=1), XN),
    ("nanstd", lambda m, a: m.nanstd(a, axis=(0, 1)), XN),
    ("nanargmax", lambda m, a: m.nanargmax(a, axis=1), XN),
    ("nanargmin", lambda m, a: m.nanargmin(a), XN),
    ("nansum_where_initial", lambda m, a: m.nansum(a, axis=0, initial=1.5, where=X > 0), XN),
    ("nanmax_where_initial", lambda m, a: m.nanmax(a, axis=1, initial=-3., where=X > 0), XN),
    ("average", lambda m, a, w: m.average(a, axis=1, weights=w), X, W5),
    ("average_returned", lambda m, a, w: m.average(a, axis=1, weights=w, returned=True), X, W5),
    ("average_none", lambda m, a: m.average(a, axis=None, returned=True), X),
    ("median", lambda m, a: m.median(a, axis=1), X),
    ("median_even", lambda m, a: m.median(a, axis=0), X),
    ("nanmedian", lambda m, a: m.nanmedian(a, axis=1), XN),
    *[(f"quantile_{meth}", lambda m, a, q, meth=meth: m.quantile(a, q, axis=1, method=meth),
       X, Q) for meth in ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")],
    *[(f"nanquantile_{meth}",
       lambda m, a, meth=meth: m.nanquantile(a, 0.4, axis=(0, 1), method=meth, keepdims=True),
       XN) for meth in ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")],
    ("quantile_weighted", lambda m, a, q, w: m.quantile(a, q, axis=1, method="inverted_cdf",
                                                        weights=w), X, Q, W5),
    ("percentile", lambda m, a: m.percentile(a, np.array([10., 90.]), axis=0), X),
    ("nanpercentile", lambda m, a: m.nanpercentile(a, 30., axis=1), XN),
    ("cumulative_sum", lambda m, a: m.cumulative_sum(a, axis=1, include_initial=True), X),
    ("cumulative_prod", lambda m, a: m.cumulative_prod(a, axis=0), X),
    ("cov", lambda m, a: m.cov(a), X),
    ("cov_rowvar_ddof", lambda m, a: m.cov(a, rowvar=False, ddof=2), X),
    ("cov_weights", lambda m, a, w: m.cov(a, fweights=np.array([1, 3, 2, 1, 1]), aweights=w),
     X, W5),
    ("cov_y", lambda m, a, b: m.cov(a, b), X[0], X[1]),
    ("corrcoef", lambda m, a: m.corrcoef(a), X),
    ("bincount", lambda m, a, w: m.bincount(a, w, minlength=7),
     np.array([0, 2, 2, 5, 1]), W5),
    ("digitize", lambda m, a: m.digitize(a, np.array([-1., 0., 0.5, 2.])), X),
    ("digitize_decreasing_right",
     lambda m, a: m.digitize(a, np.array([2., 0.5, 0., -1.]), right=True), X),
    ("histogram_bin_edges", lambda m, a: m.histogram_bin_edges(a, 6), X),
    ("histogram", lambda m, a: m.histogram(a, bins=4, range=(-1, 1)), X),
    ("histogram_density_weights",
     lambda m, a, w: m.histogram(a, bins=np.array([-2., 0., 0.5, 3.]), weights=w,
                                 density=True), X[0], W5),
    ("histogram2d", lambda m, a, b: m.histogram2d(a, b, bins=(3, 2)), X[0], X[1]),
    ("histogramdd", lambda m, a: m.histogramdd(a, bins=3, density=True), X[:, :3]),
]


def _numpy_equal(got: Any, want: Any) -> None:
    if isinstance(want, (tuple, list)):
        for g, w in zip(got, want, strict=True):
            _numpy_equal(g, w)
        return
    want = np.asarray(want)
    got = np.asarray(got)
    assert got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("name,fn,args", [(c[0], c[1], c[2:]) for c in NUMPY_CASES],
                         ids=[c[0] for c in NUMPY_CASES])
def test_matches_numpy_float64(x64: None, name: str, fn: Any, args: tuple) -> None:
    _numpy_equal(fn(jnp, *args), fn(np, *args))


@pytest.mark.parametrize("fn,want_dtype,want_weak", [
    (lambda: jnp.nansum(np.ones(3, np.float16)), np.float16, False),
    (lambda: jnp.nanmean(np.ones(3, np.int8)), np.float32, False),
    (lambda: jnp.nanvar(np.ones(3, np.complex64)), np.float32, False),
    (lambda: jnp.nanmax(np.ones(3, np.uint8)), np.uint8, False),
    (lambda: jnp.nanargmin(np.ones(3, np.float16)), np.int32, False),
    (lambda: jnp.median(np.ones(4, np.int32)), np.float32, False),
    (lambda: jnp.quantile(np.ones(4, np.float16), 0.5), np.float16, False),
    (lambda: jnp.quantile(2., 0.5), np.float32, False),
    (lambda: jnp.nansum(2.), np.float32, False),
    (lambda: jnp.average(np.ones(4, np.int32), weights=np.ones(4, np.float16)), np.float16,
     False),
    (lambda: jnp.cumulative_sum(np.ones(3, np.uint8)), np.uint32, False),
    (lambda: jnp.cumulative_prod(np.ones(3, np.uint8)), np.uint8, False),
    (lambda: jnp.bincount(np.array([1, 2]), np.ones(2, np.float16)), np.float16, False),
    (lambda: jnp.digitize(np.ones(3, np.float32), np.zeros(0)), np.int32, False),
    (lambda: jnp.histogram(np.arange(3))[0], np.float32, False),
    (lambda: jnp.cov(np.zeros((1, 0), np.float32)), np.float32, False),
])
def test_result_dtypes(fn: Any, want_dtype: Any, want_weak: bool) -> None:
    out = fn()
    assert out.dtype == np.dtype(want_dtype) and out.weak_type == want_weak


def test_empty_and_zero_d_shapes() -> None:
    assert jnp.nansum(np.zeros((0, 3), np.float32), axis=0).shape == (3,)
    assert float(jnp.nansum(np.zeros((0,), np.float32))) == 0.0
    assert np.isnan(jnp.nanmean(np.zeros((0,), np.float32)))
    assert jnp.quantile(np.float32(2.), np.array([0.1, 0.9], np.float32)).shape == (2,)
    assert jnp.median(np.zeros((2, 0, 3), np.float32), axis=2).shape == (2, 0)
    assert jnp.cov(np.zeros((0, 3), np.float32)).shape == (0, 0)
    assert jnp.cov(np.zeros((2, 0), np.float32)).shape == (2, 2)
    assert jnp.bincount(np.zeros((0,), np.int32)).shape == (0,)
    assert jnp.bincount(np.zeros((0,), np.int32), minlength=3).tolist() == [0, 0, 0]
    assert jnp.cumulative_sum(np.zeros((0,), np.float32), include_initial=True).tolist() == [0.]
    counts, edges = jnp.histogram(np.float32(1.), bins=2)
    assert counts.tolist() == [0., 1.] and edges.tolist() == [0.5, 1.0, 1.5]


def test_bincount_negative_clipped_and_drop_past_length() -> None:
    x = np.array([-1, -1, 1, 3, 10])
    assert jnp.bincount(x, length=5).tolist() == [2, 1, 0, 1, 0]
    assert pyjax.jit(lambda a: jnp.bincount(a, length=4))(x).tolist() == [2, 1, 0, 1]


def test_quantile_errors() -> None:
    with pytest.raises(ValueError, match="does not support overwrite_input"):
        jnp.quantile(X, 0.5, overwrite_input=True)
    with pytest.raises(ValueError, match="complex input"):
        jnp.quantile(X.astype(np.complex64), 0.5)
    with pytest.raises(ValueError, match="repeated axis"):
        jnp.quantile(X, 0.5, axis=(0, 0))
    with pytest.raises(ValueError, match=r"Weights shape \(3,\) must match reduction axes"):
        jnp.quantile(X, 0.5, axis=1, weights=np.ones(3), method="inverted_cdf")
    with pytest.raises(NotImplementedError, match="string values for `bins`"):
        jnp.histogram_bin_edges(X, bins="auto")
    with pytest.raises(TypeError, match="asarray: expected ArrayLike, got auto"):
        jnp.histogram(X, bins="auto")
    with pytest.raises(ValueError, match="should be a bin for each dimension"):
        jnp.histogramdd(X[:, :2], bins=[2, 2, 2])
    with pytest.raises(ValueError, match="digitize: bins must be a 1-dimensional array"):
        jnp.digitize(X, np.ones((2, 2)))


# ---------------------------------------------------------------------------------------------
# (3) derivatives (numerical, order 2) and vmap
# ---------------------------------------------------------------------------------------------

_XG = np.array([[0.3, -1.2, 0.8, 2.1], [1.5, 0.2, -0.7, 0.9], [-0.4, 1.1, 0.6, -1.8]])
_XGN = _XG.copy()
_XGN[1, 2] = np.nan
_WG = np.array([0.5, 1.5, 1.0, 2.0])

GRAD_CASES = [
    ("nansum", lambda a: jnp.nansum(jnp.where(jnp.isnan(_XGN), np.nan, a), axis=1)),
    ("nanprod", lambda a: jnp.nanprod(a, axis=0)),
    ("nanmax", lambda a: jnp.nanmax(a, axis=1)),
    ("nanmin_initial", lambda a: jnp.nanmin(a, axis=0, initial=0.5)),
    ("nanmean", lambda a: jnp.nanmean(jnp.where(jnp.isnan(_XGN), np.nan, a), axis=0)),
    ("nanvar", lambda a: jnp.nanvar(a, axis=1, ddof=1)),
    ("nanstd", lambda a: jnp.nanstd(a)),
    ("average", lambda a: jnp.average(a, axis=1, weights=_WG)),
    ("average_weights", lambda w: jnp.average(_XG, axis=1, weights=w[0])),
    ("median", lambda a: jnp.median(a, axis=1)),
    ("nanmedian", lambda a: jnp.nanmedian(a, axis=0)),
    ("quantile_linear", lambda a: jnp.quantile(a, np.array([0.2, 0.7]), axis=1)),
    ("quantile_nearest", lambda a: jnp.quantile(a, 0.4, axis=0, method="nearest")),
    ("percentile", lambda a: jnp.percentile(a, 35., axis=(0, 1))),
    ("nanquantile", lambda a: jnp.nanquantile(a, 0.6, axis=1)),
    ("cumulative_sum", lambda a: jnp.cumulative_sum(a, axis=1, include_initial=True)),
    ("cumulative_prod", lambda a: jnp.cumulative_prod(a, axis=0)),
    ("cov", lambda a: jnp.cov(a, aweights=_WG)),
    ("corrcoef", lambda a: jnp.corrcoef(a)),
    ("histogram_weights", lambda w: jnp.histogram(_XG[0], bins=3, weights=w[0])[0]),
    ("bincount_weights", lambda w: jnp.bincount(np.array([0, 2, 2, 1]), w[0], length=4)),
]


@pytest.mark.parametrize("name,fn", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_grads_order_2(x64: None, name: str, fn: Any) -> None:
    arg = _WG[None] if name.endswith("weights") else _XG
    check_grads(fn, (arg,), order=2, atol=1e-6, rtol=1e-6)


VMAP_CASES = [
    ("nansum", lambda a: jnp.nansum(a, axis=0, where=a > -1, initial=1.)),
    ("nanmax", lambda a: jnp.nanmax(a)),
    ("nanvar", lambda a: jnp.nanvar(a, ddof=1)),
    ("nanargmax", lambda a: jnp.nanargmax(a)),
    ("average", lambda a: jnp.average(a, weights=jnp.abs(a) + 1., returned=True)),
    ("median", lambda a: jnp.median(a)),
    ("nanquantile", lambda a: jnp.nanquantile(a, np.array([0.3, 0.6], np.float32))),
    ("quantile_inverted_cdf", lambda a: jnp.quantile(a, 0.5, method="inverted_cdf")),
    ("cumulative_sum", lambda a: jnp.cumulative_sum(a, include_initial=True)),
    ("cov", lambda a: jnp.cov(a, a[::-1])),
    ("corrcoef", lambda a: jnp.corrcoef(a, a ** 2)),
    ("bincount", lambda a: jnp.bincount(jnp.abs(a * 3).astype(int), a, length=6)),
    ("digitize", lambda a: jnp.digitize(a, np.array([-1., 0., 1.], np.float32))),
    ("histogram", lambda a: jnp.histogram(a, bins=3, range=(-2, 2))),
]


@pytest.mark.parametrize("name,fn", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_vmap_matches_loop(name: str, fn: Any) -> None:
    batch = _XGN.astype(np.float32) if name.startswith("nan") else _XG.astype(np.float32)
    got = pyjax.vmap(fn)(batch)
    rows = [fn(row) for row in batch]
    flat_got = pyjax.tree_util.tree_leaves(got)
    flat_rows = [pyjax.tree_util.tree_leaves(r) for r in rows]
    for i, leaf in enumerate(flat_got):
        want = np.stack([np.asarray(r[i]) for r in flat_rows])
        np.testing.assert_allclose(np.asarray(leaf), want, rtol=1e-6, atol=1e-6)
        assert np.asarray(leaf).dtype == want.dtype
