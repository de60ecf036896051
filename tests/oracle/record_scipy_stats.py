"""Record JAX's jax.scipy.stats: elementwise values on grids into
tests/data/scipy_stats_values.json, and jaxprs, values and errors of sample calls (the
non-elementwise functions: mode, rankdata, sem, dirichlet, multinomial, multivariate_normal,
gaussian_kde, poisson.entropy) into tests/data/scipy_stats.json.

    /work/oracle/bin/python tests/oracle/record_scipy_stats.py

Needs jax==0.10.2.  Grid values are recorded with x64 off (float32) and on (float64) as exact
bit patterns (hex) of JAX's eager output; the inputs are the grids below rounded to the dtype
(the test rebuilds them from this module, which never imports jax at import time).
"""

import importlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "data")
OUT_VALUES = os.path.join(DATA, "scipy_stats_values.json")
OUT_CASES = os.path.join(DATA, "scipy_stats.json")
sys.path.insert(0, HERE)

NAN, INF = float("nan"), float("inf")
#: points on the real line: both tails, around 0, the infinities and nan
X_REAL = [-300.0, -40.0, -9.0, -3.0, -1.0, -0.5, -1e-3, 0.0, 1e-3, 0.5, 1.0, 2.5, 5.0, 12.0,
          40.0, 300.0, INF, -INF, NAN]
#: points for distributions on [0, 1]
X_UNIT = [-0.5, 0.0, 1e-5, 0.01, 0.2, 0.5, 0.8, 0.99, 1.0 - 1e-4, 1.0, 1.5, NAN]
#: probabilities, with out-of-range ones
Q = [0.0, 1e-6, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.9999, 1.0, -0.1, 1.1, NAN]
#: counts for the discrete distributions (a fraction, negatives, nan)
K = [-3.0, -1.0, 0.0, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 2.5, NAN]
LOC = [0.0, -1.5, 2.0]
X64_STRIDE = 4
SCALE = [1.0, 0.5, 3.0, -1.0]
SHAPE = [0.3, 1.0, 2.5, 10.0, -1.0]


def _loc_scale(*fns):
    return [(fn, [X_REAL if fn not in ("ppf", "isf") else Q, LOC, SCALE]) for fn in fns]


#: distribution -> [(function, [grid axis per positional argument])]
SPECS = {
    "norm": _loc_scale("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"),
    "cauchy": _loc_scale("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"),
    "laplace": _loc_scale("logpdf", "pdf", "cdf"),
    "logistic": _loc_scale("logpdf", "pdf", "cdf", "sf", "ppf", "isf"),
    "uniform": _loc_scale("logpdf", "pdf", "cdf", "ppf"),
    "expon": _loc_scale("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"),
    "gumbel_l": _loc_scale("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"),
    "gumbel_r": _loc_scale("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"),
    "pareto": [(fn, [[0.5, 1.0, 1.2, 2.0, 5.0, 40.0, 1e4, -1.0, INF, NAN] if fn != "ppf" else Q,
                     [0.5, 2.0, 7.0, -1.0], [0.0, -0.5], [1.0, 0.5, 2.0]])
               for fn in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf")],
    "t": [(fn, [X_REAL, [0.5, 1.0, 3.0, 1e4, -1.0], [0.0, 1.0], [2.0, -1.0]])
          for fn in ("logpdf", "pdf")],
    "gamma": [(fn, [X_REAL, SHAPE, [0.0, -1.0], [2.0, -1.0]])
              for fn in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")],
    "chi2": [(fn, [X_REAL, [0.5, 1.0, 2.0, 5.0, 30.0, -1.0], [0.0, -1.0], [1.0, 2.0]])
             for fn in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")],
    "beta": [(fn, [X_UNIT, [0.5, 1.0, 20.0, -1.0], [0.5, 3.0, 0.0], [0.0, -0.2], [1.0, 1.5]])
             for fn in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")],
    "gennorm": [(fn, [X_REAL, [0.5, 1.0, 2.0, 8.0]]) for fn in ("logpdf", "pdf", "cdf")],
    "vonmises": [(fn, [X_REAL, [0.01, 1.0, 4.0, 50.0, 0.0, -1.0]]) for fn in ("logpdf", "pdf")],
    "wrapcauchy": [(fn, [[-0.5, 0.0, 0.3, 1.0, 3.0, 3.14159, 6.0, 6.283185, 7.0, NAN],
                         [0.0, 0.1, 0.5, 0.95, 1.0, -0.2]]) for fn in ("logpdf", "pdf")],
    "truncnorm": [(fn, [[-40.0, -9.0, -1.0, -0.2, 0.5, 2.0, 6.0, 40.0, INF, NAN],
                        [-INF, -10.0, -2.0, 0.0, 8.0], [-1.0, 0.5, 12.0, INF], [0.0, 0.5], [2.0]])
                  for fn in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")],
    "bernoulli": [("logpmf", [K, [0.0, 0.2, 0.5, 1.0, 1.5], [0.0, 1.0]]),
                  ("pmf", [K, [0.0, 0.2, 0.5, 1.0, 1.5], [0.0, 1.0]]),
                  ("cdf", [X_REAL, [0.0, 0.3, 1.0, -0.5, 2.0, NAN]]),
                  ("ppf", [Q, [0.0, 0.3, 1.0, -0.5, 2.0, NAN]])],
    "binom": [(fn, [K, [0.0, 1.0, 5.0, 30.0, 2.5], [0.0, 0.1, 0.5, 1.0], [0.0, 1.0]])
              for fn in ("logpmf", "pmf")],
    "nbinom": [(fn, [K, [0.5, 1.0, 5.0, 30.0], [0.1, 0.5, 0.9, 1.0], [0.0, 1.0]])
               for fn in ("logpmf", "pmf")],
    "geom": [(fn, [K, [0.05, 0.5, 1.0, 0.0], [0.0, 1.0]]) for fn in ("logpmf", "pmf")],
    "poisson": [(fn, [K, [0.0, 0.5, 3.0, 40.0, -1.0], [0.0, 1.0]])
                for fn in ("logpmf", "pmf", "cdf")],
    "betabinom": [(fn, [K, [0.0, 5.0, 30.0, -1.0], [0.5, 2.0, 0.0], [0.5, 3.0, -1.0],
                        [0.0, 1.0]]) for fn in ("logpmf", "pmf")],
}


def grid(axes, np, x64=False):
    """Every combination of the axes' values, as one flat float64 array per axis (every
    X64_STRIDE-th one for the float64 recording, which keeps the file small; float64 values are
    also checked against SciPy)."""
    mesh = np.meshgrid(*[np.array(a, np.float64) for a in axes], indexing="ij")
    return [m.ravel()[::X64_STRIDE if x64 else 1] for m in mesh]


def value_cases():
    """[(name 'dist.fn', dist, fn, axes)] of the grid recordings."""
    return [(f"{dist}.{fn}", dist, fn, axes) for dist, fns in SPECS.items() for fn, axes in fns]


def call_stats(stats, dist, fn, args):
    """stats.<dist>.<fn>(*args)."""
    return getattr(getattr(stats, dist), fn)(*args)


def jaxpr_cases(jax, jnp, lax, np):
    """[(name, fn, args)]: the record is make_jaxpr's text (or JAX's error) and the eager
    value, with x64 off and on."""
    stats = importlib.import_module(jax.__name__ + ".scipy.stats")
    f32 = np.float32
    v = np.array([0.3, 1.5, 4.0], f32)
    w = np.array([0.5, 2.0, 3.0], f32)
    ints = np.array([[1, 2, 2, 3, 3, 3], [4, 0, 4, 0, 7, 7]], np.int32)
    data = np.array([[3.0, 1.0, 2.0, 2.0, 5.0, 1.0, 2.0], [0.5, 0.5, 0.1, 0.9, 0.9, 0.9, 0.2]],
                    f32)
    mvn_x = np.array([[0.3, -1.0, 2.0], [1.0, 0.0, 0.5]], f32)
    mvn_mean = np.array([0.1, -0.2, 0.4], f32)
    mvn_cov = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.7]], f32)
    kde_data = np.array([[0.1, -1.2, 0.8, 2.2, 1.1, -0.4, 0.0, 1.7],
                         [1.0, 0.4, -0.3, 0.9, 2.0, -1.1, 0.5, 0.2]], f32)
    kde_w = np.array([1.0, 2.0, 1.0, 0.5, 3.0, 1.0, 2.0, 1.0], f32)
    kde_pts = np.array([[0.0, 1.0, -2.0], [0.5, 0.0, 3.0]], f32)
    cases = []

    def add(name, fn, *args):
        cases.append((name, fn, args))

    def add_value(name, fn, *args):  # large programs: their value (or error) only
        cases.append((name, fn, args, False))

    # jaxprs of elementwise functions (one per family of formulas)
    add("norm_logpdf", stats.norm.logpdf, v)
    add("norm_logpdf_loc_scale", stats.norm.logpdf, v, 1.0, w)
    add("norm_cdf", stats.norm.cdf, v)
    add("norm_ppf", stats.norm.ppf, w / 4)
    add("norm_isf_scalar", stats.norm.isf, 0.3)
    add("cauchy_isf", stats.cauchy.isf, w / 4, 0.5, 2.0)
    add("laplace_cdf", stats.laplace.cdf, v, 1.0)
    add("logistic_logpdf", stats.logistic.logpdf, v)
    add("logistic_ppf", stats.logistic.ppf, w / 4)
    add("uniform_cdf", stats.uniform.cdf, v, 0.5, 2.0)
    add("expon_logcdf", stats.expon.logcdf, v)
    add("gumbel_r_logsf", stats.gumbel_r.logsf, v)
    add("gumbel_l_ppf", stats.gumbel_l.ppf, w / 4)
    add("pareto_logpdf", stats.pareto.logpdf, w, 2.0)
    add("t_logpdf", stats.t.logpdf, v, 3.0)
    add("t_logpdf_int", stats.t.logpdf, np.array([1, 2], np.int32), 3)
    add("gamma_logpdf", stats.gamma.logpdf, v, w)
    add("gamma_sf", stats.gamma.sf, v, w)
    add("chi2_cdf", stats.chi2.cdf, v, 3.0)
    add("beta_logpdf", stats.beta.logpdf, w / 4, 2.0, 3.0)
    add("beta_sf", stats.beta.sf, w / 4, 2.0, 3.0)
    add("gennorm_cdf", stats.gennorm.cdf, v, 1.5)
    add("vonmises_logpdf", stats.vonmises.logpdf, v, 2.0)
    add("wrapcauchy_logpdf", stats.wrapcauchy.logpdf, v, 0.4)
    add("truncnorm_logpdf", stats.truncnorm.logpdf, v, -1.0, 2.0)
    add("bernoulli_logpmf", stats.bernoulli.logpmf, np.array([0, 1, 2], np.int32), 0.3)
    add("bernoulli_cdf", stats.bernoulli.cdf, v, 0.3)
    add("binom_logpmf", stats.binom.logpmf, v, 5.0, 0.4)
    add("nbinom_logpmf", stats.nbinom.logpmf, v, 5.0, 0.4)
    add("geom_logpmf", stats.geom.logpmf, v, 0.4)
    add("poisson_logpmf", stats.poisson.logpmf, v, 2.0)
    add("poisson_cdf", stats.poisson.cdf, v, 2.0)
    add("betabinom_logpmf", stats.betabinom.logpmf, v, 5.0, 2.0, 3.0)
    # derivatives and batching
    add("grad_norm_logpdf", jax.grad(stats.norm.logpdf), 0.7)
    add("grad_t_logpdf_df", jax.grad(stats.t.logpdf, argnums=1), 0.7, 3.0)
    add("vmap_gamma_logpdf", jax.vmap(stats.gamma.logpdf, in_axes=(0, None)), v, 2.0)
    # values of the elementwise functions at shapes that broadcast
    add("expon_pdf_broadcast", stats.expon.pdf, v[:, None], w[None, :] - 1.0)
    # non-elementwise functions
    add("poisson_entropy", stats.poisson.entropy, np.array([0.0, 0.5, 3.0, 20.0, 150.0], f32))
    add_value("poisson_entropy_loc", stats.poisson.entropy, np.array([[2.0], [50.0]], f32),
              np.array([0.0, 1.0, 2.0], f32))
    add("dirichlet_logpdf", stats.dirichlet.logpdf, np.array([0.2, 0.3, 0.5], f32),
        np.array([1.5, 2.0, 0.7], f32))
    add("dirichlet_logpdf_batch", stats.dirichlet.logpdf,
        np.array([[0.2, 0.6], [0.3, 0.1]], f32), np.array([1.5, 2.0, 0.7], f32))
    add("dirichlet_logpdf_off_simplex", stats.dirichlet.pdf, np.array([0.2, 0.3, 0.6], f32),
        np.array([1.5, 2.0, 0.7], f32))
    add("dirichlet_alpha_2d_error", stats.dirichlet.logpdf, np.ones((2, 2), f32),
        np.ones((2, 2), f32))
    add("dirichlet_shape_error", stats.dirichlet.logpdf, np.ones(5, f32), np.ones(3, f32))
    add("multinomial_logpmf", stats.multinomial.logpmf, np.array([1, 2, 3], np.int32), 6,
        np.array([0.2, 0.3, 0.5], f32))
    add("multinomial_pmf_wrong_total", stats.multinomial.pmf, np.array([1, 2, 3], np.int32), 5,
        np.array([0.2, 0.3, 0.5], f32))
    add("multinomial_float_error", stats.multinomial.logpmf, np.array([1.0, 2.0], f32), 3.0,
        np.array([0.5, 0.5], f32))
    add("mvn_logpdf", stats.multivariate_normal.logpdf, mvn_x, mvn_mean, mvn_cov)
    add("mvn_pdf_scalar_cov", stats.multivariate_normal.pdf, mvn_x, mvn_mean, 1.5)
    add("mvn_logpdf_1d", stats.multivariate_normal.logpdf, v, 0.5, 2.0)
    add("mvn_shape_error", stats.multivariate_normal.logpdf, mvn_x, mvn_mean,
        np.eye(2, dtype=f32))
    add("mode_axis0", stats.mode, ints)
    add_value("mode_axis1_keepdims", lambda a: stats.mode(a, axis=1, keepdims=True), ints)
    add_value("mode_none", lambda a: stats.mode(a, axis=None), data)
    add_value("mode_scalar", stats.mode, 3.0)
    add("mode_policy_error", lambda a: stats.mode(a, nan_policy="omit"), ints)
    add("mode_bad_policy_error", lambda a: stats.mode(a, nan_policy="zap"), ints)
    for method in ("average", "min", "max", "dense", "ordinal"):
        add(f"rankdata_{method}", lambda a, m=method: stats.rankdata(a, m), data[0])
        add_value(f"rankdata_{method}_axis1", lambda a, m=method: stats.rankdata(a, m, axis=1),
                  data)
    add_value("rankdata_ints", stats.rankdata, ints)
    add("rankdata_nan", stats.rankdata, np.array([1.0, np.nan, 0.0], f32))
    add("rankdata_method_error", lambda a: stats.rankdata(a, "middle"), data)
    add("rankdata_policy_error", lambda a: stats.rankdata(a, nan_policy="raise"), data)
    add("sem", stats.sem, data)
    add("sem_axis_none_ddof0", lambda a: stats.sem(a, None, ddof=0), data)
    add("sem_axis1_keepdims", lambda a: stats.sem(a, 1, keepdims=True), data)
    add("sem_omit", lambda a: stats.sem(a, 1, nan_policy="omit"),
        np.array([[1.0, np.nan, 3.0, 4.0], [2.0, 2.5, np.nan, np.nan]], f32))
    add("sem_ints", stats.sem, ints)
    add_value("kde_evaluate", lambda d, p: stats.gaussian_kde(d).evaluate(p), kde_data,
              kde_pts)
    add_value("kde_logpdf_weighted",
              lambda d, w, p: stats.gaussian_kde(d, weights=w).logpdf(p), kde_data, kde_w,
              kde_pts)
    add_value("kde_silverman_pdf", lambda d, p: stats.gaussian_kde(d, "silverman").pdf(p),
              kde_data, kde_pts)
    add_value("kde_scalar_bw_call", lambda d, p: stats.gaussian_kde(d, 0.5)(p), kde_data,
              kde_pts)
    add_value("kde_callable_bw",
              lambda d, p: stats.gaussian_kde(d, lambda k: k.neff ** -0.3)(p), kde_data,
              kde_pts)
    add_value("kde_1d_point", lambda d: stats.gaussian_kde(d[0]).evaluate(0.4), kde_data)
    add_value("kde_fields",
              lambda d, w: jax.tree_util.tree_leaves(stats.gaussian_kde(d, weights=w)),
              kde_data, kde_w)
    add_value("kde_integrate_gaussian", lambda d: stats.gaussian_kde(d).integrate_gaussian(
              np.array([0.1, 0.2], f32), np.eye(2, dtype=f32)), kde_data)
    add("kde_integrate_box_1d", lambda d: stats.gaussian_kde(d[0]).integrate_box_1d(-0.5, 1.0),
        kde_data)
    add_value("kde_integrate_kde", lambda d: stats.gaussian_kde(d).integrate_kde(
              stats.gaussian_kde(d[:, :5] + 0.5)), kde_data)
    add_value("kde_resample", lambda d, w: stats.gaussian_kde(d, weights=w).resample(
              jax.random.key(3), (4,)), kde_data, kde_w)
    add_value("kde_resample_1d",
              lambda d: stats.gaussian_kde(d[1]).resample(jax.random.key(0)), kde_data)
    add_value("kde_point_dimension_error", lambda d: stats.gaussian_kde(d).evaluate(
              np.ones((3, 2), f32)), kde_data)
    add("kde_bw_error", lambda d: stats.gaussian_kde(d, "wide"), kde_data)
    add("kde_single_element_error", lambda: stats.gaussian_kde(np.ones(1, f32)))
    add("kde_box_2d_error", lambda d: stats.gaussian_kde(d).integrate_box_1d(0.0, 1.0),
        kde_data)
    add("kde_box_error", lambda d: stats.gaussian_kde(d).integrate_box(0.0, 1.0), kde_data)
    add("kde_set_bandwidth_error", lambda d: stats.gaussian_kde(d).set_bandwidth(), kde_data)
    return cases


def value_of(np, out):
    """An eager result as JSON: nested (dtype, shape, values) records, NaN spelled out."""
    if isinstance(out, (tuple, list)):
        return [value_of(np, o) for o in out]
    arr = np.asarray(out)
    values = arr.astype(np.float64).tolist() if arr.dtype.kind == "f" else arr.tolist()
    return {"dtype": str(arr.dtype), "shape": list(arr.shape), "values": values,
            "weak_type": bool(getattr(out, "weak_type", False))}


def _record_values():
    import jax
    import numpy as np
    from jax.scipy import stats

    records = []
    for x64, dtype in ((False, np.float32), (True, np.float64)):
        jax.config.update("jax_enable_x64", x64)
        for name, dist, fn, axes in value_cases():
            args = [a.astype(dtype) for a in grid(axes, np, x64)]
            out = np.asarray(call_stats(stats, dist, fn, args))
            assert out.dtype == dtype, (name, out.dtype)
            bits = out.view(f"u{out.dtype.itemsize}")
            records.append({"name": name, "x64": x64, "dtype": str(out.dtype),
                            "output": [format(int(b), "x") for b in bits]})
    with open(OUT_VALUES, "w") as f:
        f.write('{"jax_version": %s, "records": [\n%s\n]}\n' % (
            json.dumps(jax.__version__), ",\n".join(json.dumps(r) for r in records)))
    print(f"wrote {len(records)} records to {OUT_VALUES}", file=sys.stderr)


if __name__ == "__main__":
    from jaxpr_recording import record_jaxprs_and_values
    _record_values()
    record_jaxprs_and_values(jaxpr_cases, OUT_CASES, lambda out, np, jax: value_of(np, out))
