"""jax.scipy.optimize: minimize (BFGS and the experimental L-BFGS) and its line search against
JAX 0.10.2's recorded results (every OptimizeResults field: x, fun, jac, hess_inv, nit, nfev,
njev, status, success, with dtypes and weak types), the jaxprs of jitted minimizations byte for
byte, and SciPy's minimizers on the same problems.  Recordings: tests/data/scipy_optimize.json,
made by tests/oracle/record_scipy_optimize.py."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.optimize

import pyjax
import pyjax.numpy as jnp
import pyjax.scipy.optimize as so

from op_table import x64_mode
from recorded import by_name, cases_under, check_jaxpr, check_raises, load

from record_scipy_optimize import jaxpr_cases, problems, value_cases

DATA = load("scipy_optimize.json")
JAXPRS = by_name(r for r in DATA["records"] if r["kind"] == "jaxpr")
VALUES = by_name(r for r in DATA["records"] if r["kind"] == "value")


def _cases(fn_cases, x64: bool) -> dict:
    return cases_under(lambda jax, jnp, lax, np: fn_cases(jax, jnp, np), x64)


def _decode(rec: dict) -> np.ndarray:
    if "real" in rec:
        flat = (np.array([float(v) for v in rec["real"]])
                + 1j * np.array([float(v) for v in rec["imag"]]))
    else:
        flat = np.array([float(v) for v in rec["value"]])
    return flat.reshape(rec["shape"])


@pytest.mark.parametrize("name,x64", [pytest.param(n, x, id=f"{n}-{'x64' if x else 'x32'}")
                                      for n, x in sorted(JAXPRS)])
def test_jaxpr_matches_jax(name: str, x64: bool) -> None:
    fn, args = _cases(jaxpr_cases, x64)[name]
    with x64_mode(x64):
        check_jaxpr(fn, args, JAXPRS[(name, x64)])


FIELDS = ("x", "success", "status", "fun", "jac", "hess_inv", "nfev", "njev", "nit")


def _fields(name: str, leaves: list, outputs: list) -> list[tuple[str, object, dict]]:
    """(field, our leaf, JAX's record) for a minimize result (L-BFGS has no hess_inv)."""
    if len(leaves) not in (8, 9) or name.startswith("line_search"):
        return [(str(i), g, w) for i, (g, w) in enumerate(zip(leaves, outputs))]
    names = FIELDS if len(leaves) == 9 else tuple(f for f in FIELDS if f != "hess_inv")
    return list(zip(names, leaves, outputs))


def _value_params():
    for name, x64 in sorted(VALUES):
        if name.endswith("_float64") and not x64:
            continue  # the float32 case again: float64 inputs are float32 without x64
        yield pytest.param(name, x64, id=f"{name}-{'x64' if x64 else 'x32'}")


@pytest.mark.parametrize("name,x64", list(_value_params()))
def test_results_match_jax(name: str, x64: bool) -> None:
    """Dtypes, shapes and weak types always.  Runs in float64, first steps in float32 and the
    line search: every count, status and success exactly, and the numbers to rounding (the
    iterations take the same path).  Whole float32 runs end where float32 rounding near the
    minimum decides (a line search out of resolution), so there only the minimum found is
    compared, when both JAX and pyjax report success."""
    record = VALUES[(name, x64)]
    fn, args = _cases(value_cases, x64)[name]
    with x64_mode(x64), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        if "error" in record:
            check_raises(fn, args, record["error"])
            return
        leaves = pyjax.tree_util.tree_leaves(fn(*args))
    assert len(leaves) == len(record["outputs"])
    fields = _fields(name, leaves, record["outputs"])
    for (_, leaf, want), weak in zip(fields, record["weak"]):
        got = np.asarray(leaf)
        assert str(got.dtype) == want["dtype"]
        assert list(got.shape) == want["shape"]
        assert bool(getattr(leaf, "weak_type", False)) == weak
    single = np.asarray(leaves[0]).dtype in (np.float32, np.complex64)
    if single and "_steps" not in name and not name.startswith("line_search"):
        results = {f: (np.asarray(g), _decode(w)) for f, g, w in fields}
        both = np.logical_and(*results["success"])  # per batch element under vmap
        for f in ("x", "fun"):
            got, want = results[f]
            np.testing.assert_allclose(got[both], want[both], rtol=1e-3, atol=1e-3)
        return
    for _, leaf, want in fields:
        got = np.asarray(leaf)
        if got.dtype.kind in "biu":
            np.testing.assert_array_equal(got, _decode(want))
        else:
            tol = 1e-3 if got.dtype in (np.float32, np.complex64) else 1e-7
            np.testing.assert_allclose(got, _decode(want).astype(got.dtype), rtol=tol,
                                       atol=tol)


@pytest.mark.parametrize("method", ["BFGS", "l-bfgs-experimental-do-not-rely-on-this"])
def test_minimum_matches_scipy(method: str) -> None:
    """In float64, wherever the minimizer reports success (JAX's own BFGS often stops early
    with a failed line search; those outcomes are held to JAX's above), it found SciPy's
    minimum from the same start."""
    successes = 0
    with x64_mode(True):
        for fun, starts in problems(jnp, np).values():
            grad = pyjax.grad(fun)
            for x0 in starts:
                x0 = np.array(x0, np.float64)
                got = so.minimize(fun, x0, method=method)
                if not bool(got.success):
                    assert int(got.status) != 0
                    continue
                successes += 1
                want = scipy.optimize.minimize(
                    lambda x: float(fun(jnp.asarray(x))), x0, method="BFGS",
                    jac=lambda x: np.asarray(grad(jnp.asarray(x))))
                assert want.success and int(got.status) == 0
                np.testing.assert_allclose(got.x, want.x, rtol=1e-4, atol=1e-4)
                np.testing.assert_allclose(got.fun, want.fun, atol=1e-8)
                assert np.max(np.abs(np.asarray(got.jac))) < 1e-5
    assert successes >= 5


def test_results_type_and_fields() -> None:
    fun, _ = problems(jnp, np)["quadratic"]
    res = so.minimize(fun, np.zeros(3, np.float32), method="BFGS")
    assert isinstance(res, so.OptimizeResults) and isinstance(res, tuple)
    assert so.OptimizeResults._fields == ("x", "success", "status", "fun", "jac", "hess_inv",
                                          "nfev", "njev", "nit")
    lres = so.minimize(fun, np.zeros(3, np.float32),
                       method="l-bfgs-experimental-do-not-rely-on-this")
    assert lres.hess_inv is None
    with x64_mode(True):
        a = np.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.25], [0.0, 0.25, 1.0]])
        res = so.minimize(fun, np.zeros(3), method="BFGS")
        np.testing.assert_allclose(res.x, np.linalg.solve(a, np.ones(3)), rtol=1e-6)
        np.testing.assert_allclose(res.hess_inv, np.linalg.inv(a), rtol=0.2, atol=0.05)


def test_minimize_under_jit_and_vmap() -> None:
    fun, _ = problems(jnp, np)["himmelblau"]
    starts = np.array([[0.0, 0.0], [-3.0, 3.0], [4.0, -2.0]], np.float32)
    solve = pyjax.jit(lambda x: so.minimize(fun, x, method="BFGS"))
    batched = pyjax.vmap(lambda x: so.minimize(fun, x, method="BFGS"))(starts)
    for i, x0 in enumerate(starts):
        single = solve(x0)
        for got, want in zip(pyjax.tree_util.tree_leaves(batched),
                             pyjax.tree_util.tree_leaves(single)):
            np.testing.assert_allclose(np.asarray(got)[i], want, rtol=1e-5, atol=1e-5)
