"""Record JAX 0.10.2's jax.scipy.optimize: minimize's results (every OptimizeResults field:
dtype, shape, weak type, numbers) for BFGS and the experimental L-BFGS on standard problems,
the line search's results, error texts, and jaxprs of a sample, x64 off and on, into
tests/data/scipy_optimize.json (read by tests/test_scipy_optimize.py).

    /work/oracle/bin/python tests/oracle/record_scipy_optimize.py
"""
import importlib
import os

from record_scipy_linalg import value_records

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "scipy_optimize.json")
LBFGS = "l-bfgs-experimental-do-not-rely-on-this"


def problems(jnp, np):
    """name -> (objective, starting points): smooth test functions of SciPy's suite."""
    def rosen(x):
        return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    def himmelblau(x):
        return (x[0] ** 2 + x[1] - 11.) ** 2 + (x[0] + x[1] ** 2 - 7.) ** 2

    quad_a = np.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.25], [0.0, 0.25, 1.0]])

    def quadratic(x):
        return 0.5 * x @ jnp.asarray(quad_a, x.dtype) @ x - jnp.sum(x)

    def beale(x):
        return ((1.5 - x[0] + x[0] * x[1]) ** 2 + (2.25 - x[0] + x[0] * x[1] ** 2) ** 2
                + (2.625 - x[0] + x[0] * x[1] ** 3) ** 2)

    def zakharov(x):
        ii = jnp.arange(1, x.shape[0] + 1, dtype=x.dtype)
        s = jnp.sum(0.5 * ii * x)
        return jnp.sum(x ** 2) + s ** 2 + s ** 4

    return {
        "rosen2": (rosen, [[-1.2, 1.0], [0.0, 0.0], [2.0, 2.0]]),
        "rosen5": (rosen, [[1.3, 0.7, 0.8, 1.9, 1.2]]),
        "himmelblau": (himmelblau, [[0.0, 0.0], [-3.0, 3.0], [4.0, -2.0]]),
        "quadratic": (quadratic, [[1.0, -1.0, 2.0], [0.0, 0.0, 0.0]]),
        "beale": (beale, [[1.0, 1.0]]),
        "zakharov": (zakharov, [[1.0, -2.0, 0.5, 1.5]]),
    }


def value_cases(jax, jnp, np):
    """(name, fn, args): minimize's results (all fields), eager and jitted."""
    so = importlib.import_module(jax.__name__ + ".scipy.optimize")
    ls = importlib.import_module(jax.__name__ + "._src.scipy.optimize.line_search")
    C = []

    def add(name, fn, *args):
        assert name not in {c[0] for c in C}, name
        C.append((name, fn, args))

    for pname, (f, starts) in problems(jnp, np).items():
        for i, x0 in enumerate(starts):
            for dtype in (np.float32, np.float64):
                x = np.array(x0, dtype)
                tag = f"{pname}_{i}_{np.dtype(dtype).name}"
                add(f"bfgs_{tag}", lambda x, f=f: so.minimize(f, x, method="BFGS"), x)
                add(f"lbfgs_{tag}", lambda x, f=f: so.minimize(f, x, method=LBFGS), x)
    # float32 paths wander apart at the last ulp near a minimum: their first steps (every
    # count and value) are compared closely, the full runs above by their outcome
    for pname in ("rosen2", "himmelblau", "beale", "zakharov"):
        f, starts = problems(jnp, np)[pname]
        for steps in (2, 4):
            for method, tag in (("BFGS", "bfgs"), (LBFGS, "lbfgs")):
                add(f"{tag}_{pname}_steps{steps}", lambda x, f=f, m=method, k=steps: so.minimize(
                    f, x, method=m, options=dict(maxiter=k)), np.array(starts[0], np.float32))
    rosen, _ = problems(jnp, np)["rosen2"]
    quad, _ = problems(jnp, np)["quadratic"]
    x2 = np.array([-1.2, 1.0], np.float32)
    add("bfgs_jit", jax.jit(lambda x: so.minimize(rosen, x, method="bfgs")), x2)
    add("lbfgs_jit", jax.jit(lambda x: so.minimize(rosen, x, method=LBFGS)), x2)
    add("bfgs_maxiter", lambda x: so.minimize(rosen, x, method="BFGS",
                                              options=dict(maxiter=3)), x2)
    add("bfgs_gtol_norm2", lambda x: so.minimize(rosen, x, method="BFGS", options=dict(
        gtol=1e-3, norm=2, line_search_maxiter=20)), x2.astype(np.float64))
    add("bfgs_converged_start", lambda x: so.minimize(quad, x, method="BFGS"),
        np.linalg.solve([[3.0, 0.5, 0.0], [0.5, 2.0, 0.25], [0.0, 0.25, 1.0]], np.ones(3)))
    add("bfgs_args", lambda x, c: so.minimize(lambda x, c, s: jnp.sum((x - c) ** 2) * s, x,
                                              args=(c, 2.0), method="BFGS"),
        np.zeros(3, np.float32), np.array([1.0, -2.0, 3.0], np.float32))
    add("lbfgs_options", lambda x: so.minimize(rosen, x, method=LBFGS, options=dict(
        maxcor=3, maxls=5, ftol=1e-12, gtol=1e-8)), x2.astype(np.float64))
    add("lbfgs_maxfun", lambda x: so.minimize(rosen, x, method=LBFGS,
                                              options=dict(maxfun=10)), x2.astype(np.float64))
    add("lbfgs_maxgrad", lambda x: so.minimize(rosen, x, method=LBFGS,
                                               options=dict(maxgrad=8)), x2.astype(np.float64))
    add("lbfgs_complex", lambda x: so.minimize(
        lambda z: jnp.sum(jnp.abs(z - (1 + 2j)) ** 2 + jnp.abs(z) ** 4), x, method=LBFGS),
        np.array([0.5 + 0.5j, -1.0j], np.complex64))
    add("bfgs_vmap", jax.vmap(lambda x: so.minimize(rosen, x, method="BFGS")),
        np.array([[-1.2, 1.0], [2.0, 2.0]], np.float32))
    add("error_method", lambda x: so.minimize(rosen, x, method="Nelder-Mead"), x2)
    add("error_args", lambda x: so.minimize(rosen, x, args=[1], method="BFGS"), x2)
    # the line search on its own
    xk = np.array([-1.2, 1.0], np.float64)
    pk = np.array([1.0, 0.5], np.float64)
    add("line_search", lambda x, p: ls.line_search(rosen, x, p), xk, pk)
    add("line_search_f32", lambda x, p: ls.line_search(rosen, x, p), xk.astype(np.float32),
        pk.astype(np.float32))
    add("line_search_given", lambda x, p: ls.line_search(
        rosen, x, p, old_fval=rosen(x), old_old_fval=rosen(x) + 1.0,
        gfk=jax.grad(rosen)(x)), xk, -np.array([-215.6, -88.0]))
    add("line_search_c1c2", lambda x, p: ls.line_search(rosen, x, p, c1=0.3, c2=0.4,
                                                        maxiter=3), xk, pk)
    add("line_search_ascent", lambda x, p: ls.line_search(rosen, x, p, maxiter=5), xk, -pk)
    return C


def jaxpr_cases(jax, jnp, np):
    """(name, fn, args) for make_jaxpr: small jitted minimizations."""
    so = importlib.import_module(jax.__name__ + ".scipy.optimize")
    quad, _ = problems(jnp, np)["quadratic"]
    x3 = np.array([1.0, -1.0, 2.0], np.float32)
    return [
        ("bfgs_quadratic", lambda x: so.minimize(quad, x, method="BFGS"), x3),
        ("lbfgs_quadratic", lambda x: so.minimize(quad, x, method=LBFGS, options=dict(
            maxiter=4)), x3),
    ]


def _records(x64):
    import warnings

    import jax
    import jax.numpy as jnp
    import numpy as np
    from jaxpr_recording import _record

    warnings.simplefilter("ignore")
    records = _record(lambda jax, jnp, lax, np: jaxpr_cases(jax, jnp, np), x64)
    for rec in records:
        rec["kind"] = "jaxpr"
    return records + value_records(jax, value_cases(jax, jnp, np), x64)


if __name__ == "__main__":
    from jaxpr_recording import write_records
    write_records(_records(False) + _records(True), OUT)
