"""Record JAX 0.10.2's values and jaxprs of jax.scipy.special into
tests/data/scipy_special.json.

    /work/oracle/bin/python tests/oracle/record_scipy_special.py

Values are eager results (as a user calls the functions) with x64 off (float32) and on
(float64), stored with their inputs as exact bit patterns (hex) so the test runs pyjax on the
very same arrays.  `value_cases(np)`, `call(special, ...)` and `jaxpr_cases(jax, jnp, special,
np)` never import jax themselves (tests/test_scipy_special.py imports this module too).
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "scipy_special.json")
sys.path.insert(0, HERE)

NAN, INF = float("nan"), float("inf")

#: the real line with its tails, poles and specials (1/x stays a normal float32: XLA flushes
#: subnormals to zero, NumPy does not)
LINE = [-1e10, -1e3, -100.0, -50.0, -35.0, -20.0, -10.5, -10.0, -5.5, -4.0, -3.0, -2.5, -2.0,
        -1.5, -1.0, -0.5, -0.1, -1e-3, -0.0, 0.0, 1e-30, 1e-6, 1e-3, 0.1, 0.25, 0.5, 0.75, 1.0,
        1.25, 1.5, 2.0, 2.5, 3.0, 3.25, 4.0, 4.5, 5.0, 6.25, 7.0, 8.0, 10.0, 12.0, 20.0, 26.0,
        35.0, 50.0, 80.0, 100.0, 171.0, 500.0, 1e3, 1e5, 1e10, 3e37, INF, -INF, NAN]
#: probabilities (and just outside); nothing below float32's normal range, which XLA flushes
PROB = [0.0, 1e-37, 1e-30, 1e-10, 1e-6, 1e-3, 0.01, 0.05, 0.1, 0.1353352832366127, 0.2, 0.3,
        0.5, 0.6, 0.75, 0.8646647167633873, 0.9, 0.99, 0.999, 0.999999, 1.0, -0.5, 1.5, NAN]
#: positive parameters of the gamma/beta families
POS = [0.0, 1e-3, 0.1, 0.5, 1.0, 1.5, 2.5, 4.0, 7.5, 8.0, 12.0, 30.0, 100.0, 1e3, 1e5, -0.5,
       -2.0, INF, NAN]


def _grid(np, *axes):
    """Every combination of the axes' values, as one flat float64 array per axis."""
    mesh = np.meshgrid(*[np.array(a, np.float64) for a in axes], indexing="ij")
    return [m.ravel() for m in mesh]


def value_cases(np):
    """List of (name, function, params, inputs): inputs are float64 arrays cast to the float
    dtype under test, or (array, dtype name) pairs kept at that dtype."""
    rng = np.random.default_rng(20260112)
    line = np.concatenate([LINE, np.linspace(-12.0, 12.0, 97)])
    pos_line = np.concatenate([[0.0, 1e-30, 1e-6, 1e-3, 0.1, 0.5, 1.0, 1.5, 2.0, 3.0, 7.0, 20.0,
                                100.0, 1e4, INF, NAN, -1.0], rng.uniform(0, 10, 40)])
    cases = []

    def add(name, fn, inputs, params=None):
        assert name not in {c[0] for c in cases}, name
        cases.append((name, fn, params or {}, inputs))

    for fn in ("gammaln", "gammasgn", "gamma", "digamma", "loggamma", "factorial", "erf", "erfc",
               "expit", "entr", "i0", "i0e", "i1", "i1e", "ndtr", "log_ndtr", "erfcx", "dawsn",
               "spence", "sici", "fresnel"):
        add(fn, fn, [line])
    # (E1's continued fraction runs on every element under JAX's batched piecewise, and takes
    # many steps for small x > 0 (about 10^5 at x = 1e-3): no 0 < |x| < 0.1 here)
    for fn in ("expi", "exp1"):
        add(fn, fn, [line[~((np.abs(line) > 0) & (np.abs(line) < 0.1))]])
    add("log_ndtr_series_order_5", "log_ndtr", [line], {"series_order": 5})
    add("log_ndtr_series_order_0", "log_ndtr", [line], {"series_order": 0})
    for fn in ("ndtri", "erfinv", "logit"):
        add(fn, fn, [np.concatenate([PROB, -np.array(PROB[1:13]), rng.uniform(0, 1, 40)])])
    a, b = _grid(np, POS, POS)
    for fn in ("gammainc", "gammaincc", "betaln", "beta", "poch", "comb", "xlogy", "xlog1py",
               "rel_entr", "kl_div", "boxcox", "boxcox1p"):
        add(f"{fn}_grid", fn, [a, b])
    s, q = _grid(np, [1.0, 1.01, 1.5, 2.0, 3.3, 7.0, 20.0, 60.0, 0.5, -2.0, NAN, INF],
                 [0.01, 0.5, 1.0, 2.0, 3.7, 10.0, 250.0, 0.0, -1.0, -2.5, NAN, INF])
    add("zeta_grid", "zeta", [s, q])
    xy = _grid(np, [-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 5.0, 1e3, INF, NAN],
               [-1.0, -0.5, 0.0, 0.3, 1.0, 2.0, 10.0, INF, NAN])
    for fn in ("xlogy", "xlog1py", "rel_entr", "kl_div", "boxcox", "boxcox1p"):
        add(f"{fn}_signed", fn, xy)
    add("betainc_grid", "betainc", _grid(np, [0.02, 0.5, 1.0, 2.5, 8.0, 40.0, 0.0, -1.0, INF],
                                         [0.02, 0.5, 1.0, 2.5, 8.0, 40.0],
                                         [0.0, 0.05, 0.3, 0.5, 0.77, 0.98, 1.0, 1.2, NAN]))
    add("multigammaln_d1", "multigammaln", [pos_line + 0.5], {"d": 1})
    add("multigammaln_d4", "multigammaln", [pos_line + 2.0], {"d": 4})
    n, x = _grid(np, [0, 1, 2, 3, 5], [0.05, 0.5, 1.0, 2.3, 7.0, 40.0, -0.5, -2.0, -3.3, 0.0,
                                        NAN, INF])
    add("polygamma_grid", "polygamma", [(n, "int32"), x])
    n, x = _grid(np, [0, 1, 2, 3, 5, 10, 6000], [0.0, 0.1, 0.25, 0.5, 1.0, 1.5, 3.0, 10.0,
                                                   50.0, 700.0, -1.0, INF, NAN])
    add("expn_grid", "expn", [(n, "int32"), x])
    h, aa = _grid(np, [0.0, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, -1.0, NAN],
                  [0.0, 0.2, 0.5, 1.0, 1.5, 3.0, 20.0, -0.7, -2.0, INF, NAN])
    add("owens_t_grid", "owens_t", [h, aa])
    add("hyp1f1_grid", "hyp1f1", _grid(np, [0.0, 0.5, 1.0, 2.5, -1.5], [0.5, 1.0, 2.5, 4.0],
                                        [-20.0, -1.0, 0.0, 0.5, 3.0, 30.0]))
    add("hyp1f1_large_x", "hyp1f1", _grid(np, [0.5, 1.0, 2.5], [1.5, 3.0], [150.0, 300.0]))
    add("hyp2f1_grid", "hyp2f1", _grid(np, [0.0, 0.5, 1.0, 2.0, -2.0], [0.5, 1.5, -3.0],
                                        [1.0, 2.5, 4.0, -1.5],
                                        [-0.9, -0.2, 0.0, 0.3, 0.85, 0.95]))
    # x = 1: Gauss's sum where c - a - b > 0, inf where c - a - b <= 0; x > 1: inf; and the
    # digamma transformation near 1 for integer c - a - b
    add("hyp2f1_special", "hyp2f1", [[1.0, 0.5, 2.0, 1.5, 1.0, 0.5, 1.0, 0.25],
                                     [1.0, 1.0, 3.0, 0.5, 2.0, 1.5, 1.0, 0.75],
                                     [2.0, 3.0, 5.0, 1.5, 2.0, 4.0, 4.0, 3.0],
                                     [0.5, 0.97, 1.0, 0.92, 1.2, 1.0, 0.95, 0.99]])
    add("bessel_jn_v3", "bessel_jn", [np.array([1e-3, 0.1, 0.5, 1.0, 2.0, 3.5, 7.0, 10.0,
                                                  20.0, 40.0])], {"v": 3})
    add("bessel_jn_v0_iter", "bessel_jn", [np.array([0.3, 2.0, 9.0])], {"v": 0, "n_iter": 30})
    add("sph_harm_y", "sph_harm_y", [(np.array([0, 1, 1, 2, 2, 3, 3, 4]), "int32"),
                                     (np.array([0, 0, 1, -1, 2, -3, 1, 4]), "int32"),
                                     np.array([0.3, 1.0, 2.0, 0.5, 3.0, 1.2, 0.0, 2.5]),
                                     np.array([0.0, 0.7, 1.5, -2.0, 4.0, 0.3, 1.0, 6.0])],
        {"n_max": 4})
    z_re, z_im = _grid(np, [-6.0, -2.0, -0.5, 0.0, 0.3, 1.0, 3.0, 8.0],
                       [-5.0, -1.0, -0.1, 0.0, 0.2, 1.0, 4.0])
    add("wofz", "wofz", [(z_re + 1j * z_im, "complex")])
    add("erfcx_complex", "erfcx", [(z_re + 1j * z_im, "complex")])
    add("gamma_complex", "gamma", [(z_re + 1j * z_im, "complex")])
    add("loggamma_complex", "loggamma", [(z_re + 1j * z_im, "complex")])
    add("bernoulli_20", "bernoulli", [], {"n": 20})
    add("bernoulli_2", "bernoulli", [], {"n": 2})
    mat = np.array([[0.5, -1.0, 3.0, NAN], [2.0, 0.0, -INF, 1.0], [1e3, 1.0, 2.0, 3.0]])
    add("softmax", "softmax", [mat[1:]])
    add("softmax_axis", "softmax", [mat[1:]], {"axis": 1})
    add("log_softmax", "log_softmax", [mat[1:]])
    add("logsumexp", "logsumexp", [mat])
    add("logsumexp_axis", "logsumexp", [mat], {"axis": 0})
    return cases


def cast_inputs(np, inputs, x64):
    """The inputs of a case as arrays of the dtypes under test: floats as float32 (x64 off) or
    float64 (x64 on), complex likewise, (array, "int32") pairs as int32."""
    out = []
    for i in inputs:
        if isinstance(i, tuple):
            arr, kind = i
            if kind == "complex":
                out.append(np.asarray(arr).astype(np.complex128 if x64 else np.complex64))
            else:
                out.append(np.asarray(arr).astype(kind))
        else:
            out.append(np.asarray(i).astype(np.float64 if x64 else np.float32))
    return out


def call(special, fn, params, args):
    """jax.scipy.special.`fn`(*args, **params)."""
    return getattr(special, fn)(*args, **params)


def jaxpr_cases(jax, jnp, special, np):
    """List of (name, fn, args); the record is str(jax.make_jaxpr(fn)(*args))."""
    f32 = np.float32
    v = np.array([0.5, 1.5, 4.0], f32)
    w = np.array([0.2, 2.0, 3.0], f32)
    u = np.array([0.1, 0.5, 0.9], f32)
    cases = []

    def add(name, fn, *args):
        assert name not in {c[0] for c in cases}, name
        cases.append((name, fn, args))

    unary = ("gammaln", "gammasgn", "gamma", "digamma", "loggamma", "factorial", "erf", "erfc",
             "erfinv", "expit", "logit", "entr", "i0", "i0e", "i1", "i1e", "ndtr", "ndtri",
             "log_ndtr", "erfcx", "dawsn", "expi", "exp1", "spence", "sici", "fresnel")
    for fn in unary:
        add(f"{fn}_vector", getattr(special, fn), u)
    for fn in ("gammaln", "gamma", "erf", "logit", "ndtr", "ndtri", "log_ndtr", "entr"):
        add(f"{fn}_weak_scalar", getattr(special, fn), 0.3)
    add("gammaln_int", special.gammaln, np.array([1, 2, 3], np.int32))
    binary = ("gammainc", "gammaincc", "betaln", "beta", "poch", "comb", "xlogy", "xlog1py",
              "rel_entr", "kl_div", "boxcox", "boxcox1p", "zeta", "owens_t")
    for fn in binary:
        add(f"{fn}_vector", getattr(special, fn), v, w)
    add("xlogy_scalar_broadcast", special.xlogy, 2.0, w)
    add("betainc_vector", special.betainc, v, w, u)
    add("multigammaln", lambda a: special.multigammaln(a, 3), v + 2)
    add("polygamma", special.polygamma, np.array([0, 1, 2], np.int32), v)
    add("expn", special.expn, np.array([1, 2, 3], np.int32), v)
    add("hyp1f1", special.hyp1f1, v, w + 1, u)
    add("hyp2f1", special.hyp2f1, v, w, w + 2, u)
    add("wofz", special.wofz, v + 1j * w)
    add("gamma_complex", special.gamma, (v + 1j * w).astype(np.complex64))
    add("bessel_jn", lambda z: special.bessel_jn(z, v=2), v)
    add("sph_harm_y", lambda t, p: special.sph_harm_y(np.array([1, 2, 2]), np.array([0, 1, -2]),
                                                      t, p, n_max=2), u, w)
    add("softmax", special.softmax, np.ones((2, 3), f32))
    add("logsumexp", special.logsumexp, v)
    # derivatives: the custom JVP rules
    grads = ("gammaln", "digamma", "erf", "erfc", "erfinv", "expit", "logit", "entr", "i0e",
             "i1e", "ndtr", "ndtri", "log_ndtr", "erfcx", "dawsn", "expi", "exp1")
    for fn in grads:
        add(f"grad_{fn}", jax.grad(getattr(special, fn)), f32(0.3))
    add("grad_log_ndtr_tail", jax.grad(special.log_ndtr), f32(-12.0))
    add("grad_xlogy", jax.grad(special.xlogy, (0, 1)), f32(0.5), f32(2.0))
    add("grad_xlog1py", jax.grad(special.xlog1py, (0, 1)), f32(0.5), f32(2.0))
    add("grad_zeta_x", jax.grad(special.zeta), f32(2.5), f32(2.0))
    add("grad_zeta_q", jax.grad(special.zeta, 1), f32(2.5), f32(2.0))
    add("grad_betainc_x", jax.grad(special.betainc, 2), f32(1.5), f32(2.0), f32(0.3))
    add("grad_gammainc", jax.grad(special.gammainc, (0, 1)), f32(1.5), f32(2.0))
    add("grad_poch", jax.grad(special.poch, (0, 1)), f32(1.5), f32(2.0))
    add("grad_owens_t", jax.grad(special.owens_t, (0, 1)), f32(0.5), f32(0.7))
    add("grad_rel_entr", jax.grad(special.rel_entr, (0, 1)), f32(0.5), f32(0.7))
    add("grad_sici", jax.grad(lambda x: special.sici(x)[1]), f32(0.7))
    add("grad_fresnel", jax.grad(lambda x: special.fresnel(x)[0]), f32(0.7))
    add("grad_expn", jax.grad(special.expn, 1), np.int32(2), f32(0.7))
    add("grad_hyp1f1_x", jax.grad(special.hyp1f1, 2), f32(0.5), f32(1.5), f32(0.3))
    add("jvp_xlogy_vector", lambda x, y: jax.jvp(special.xlogy, (x, y), (x, y)), v, w)
    add("grad_grad_entr", jax.grad(jax.grad(special.entr)), f32(0.7))
    # batching
    add("vmap_xlogy", jax.vmap(special.xlogy, (0, None)), v, f32(2.0))
    add("vmap_log_ndtr", jax.vmap(special.log_ndtr), v)
    add("vmap_zeta", jax.vmap(special.zeta, (None, 0)), f32(2.0), w)
    add("vmap_gammasgn", jax.vmap(special.gammasgn), v)
    add("vmap_grad_xlogy", jax.vmap(jax.grad(special.xlogy)), v, w)
    # errors
    add("polygamma_float_n_error", special.polygamma, v, v)
    add("ndtr_int_error", special.ndtr, np.array([1, 2], np.int32))
    add("log_ndtr_order_error", lambda x: special.log_ndtr(x, 31), v)
    add("entr_complex_error", special.entr, v + 1j)
    add("multigammaln_traced_d_error", special.multigammaln, v, np.int32(3))
    add("zeta_riemann_error", special.zeta, v)
    add("factorial_exact_error", lambda n: special.factorial(n, exact=True), v)
    add("bernoulli_negative_error", lambda: special.bernoulli(-1))
    return cases


def _bits(np, arr):
    """Hex strings of an array's bit patterns (complex as (real, imag) pairs)."""
    arr = np.asarray(arr)
    if arr.dtype.kind == "c":
        arr = arr.view(np.float32 if arr.dtype == np.complex64 else np.float64)
    width = arr.dtype.itemsize
    raw = arr.reshape(-1).view(f"u{width}")
    return [format(int(b), f"0{2 * width}x") for b in raw]


def _record_values(x64):
    import jax
    import jax.scipy.special as special
    import numpy as np
    jax.config.update("jax_enable_x64", x64)
    records = []
    for name, fn, params, inputs in value_cases(np):
        args = cast_inputs(np, inputs, x64)
        rec = {"name": name, "fn": fn, "params": params, "x64": x64,
               "in_dtypes": [str(a.dtype) for a in args],
               "in_shapes": [list(a.shape) for a in args],
               "inputs": [_bits(np, a) for a in args]}
        out = call(special, fn, params, args)
        outs = list(out) if isinstance(out, tuple) else [out]
        rec["outputs"] = [_bits(np, o) for o in outs]
        rec["out_dtypes"] = [str(np.asarray(o).dtype) for o in outs]
        rec["out_shapes"] = [list(np.shape(o)) for o in outs]
        records.append(rec)
    return records


def main():
    import jax
    import jax.scipy.special as special  # noqa: F401 (loaded before the records switch x64)
    from jaxpr_recording import _record

    def cases(jax_, jnp, lax, np):
        return jaxpr_cases(jax_, jnp, jax_.scipy.special, np)

    values = _record_values(False) + _record_values(True)
    jaxprs = _record(cases, False) + _record(cases, True)
    with open(OUT, "w") as f:
        f.write('{"jax_version": %s,\n"values": [\n%s\n],\n"jaxprs": [\n%s\n]}\n' % (
            json.dumps(jax.__version__),
            ",\n".join(json.dumps(r, sort_keys=True) for r in values),
            ",\n".join(json.dumps(r, sort_keys=True) for r in jaxprs)))
    print(f"wrote {len(values)} value and {len(jaxprs)} jaxpr records to {OUT}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
