"""The jvp and transpose rules of every primitive, driven by tests/op_table.py.

(1) every `differentiable` entry: forward and reverse derivatives to order 2 against central
    differences (pyjax.test_util.check_grads), float32 and complex64 with x64 off, float64 and
    complex128 with x64 on, inputs drawn away from kinks and singularities;
(2) every entry `linear` in some operands: the transpose rule is the adjoint,
    <ct, f(t)> == <f^T(ct), t>;
(3) JAX's conventions at kinks and ties, and symbolic (float0) zero tangents of
    integer-valued primitives;
(4) make_jaxpr of grad/jvp/vjp of a set of functions prints exactly what JAX 0.10.2 printed
    (tests/data/ad_jaxprs.json, recorded by tests/oracle/record_ad.py).
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
from typing import Any, Callable, Sequence

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core.primitive import registry
from pyjax.test_util import check_grads, check_jvp, check_vjp

from op_table import DTYPES, OPS, Dom, OpCase, draw, seed_for, x64_mode

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "oracle"))
import record_ad  # noqa: E402

# ---------------------------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------------------------

#: the dtypes derivatives are checked in (64-bit ones with x64 on)
AD_DTYPES = ("float32", "complex64", "float64", "complex128")


def _smooth(dom: Any) -> Any:
    """The entry's value domain without specials, huge values and exact halves (kinks of floor,
    round, sort ties, max ties)."""
    return dataclasses.replace(dom, specials=False, big=False, halves=False)


def _away_from_zero(margin: float) -> Callable[[np.ndarray], np.ndarray]:
    def move(x: np.ndarray) -> np.ndarray:
        if x.dtype.kind == "c":
            return x + np.where(np.abs(x) < margin, margin, 0).astype(x.dtype)
        return np.where(np.abs(x) < margin, np.copysign(margin, x) + x, x).astype(x.dtype)
    return move


def _away_from_jumps(offset: float) -> Callable[[np.ndarray], np.ndarray]:
    """Values at least 0.1 from every integer + offset (where floor / round jump)."""
    def move(x: np.ndarray) -> np.ndarray:
        frac = (x - offset) - np.round(x - offset)
        return np.where(np.abs(frac) < 0.1, x + 0.2, x).astype(x.dtype)
    return move


def _spread(x: np.ndarray) -> np.ndarray:
    """Distinct values at least 0.5 apart (and real parts too): no sort ties within a step."""
    rng = np.random.default_rng(x.size)
    ranks = rng.permutation(x.size).reshape(x.shape) * 0.5 - x.size / 4
    return (x * 0.1 + ranks).astype(x.dtype)


#: entry name -> {operand index: adjustment} (kinks at 0, poles at 0)
ADJUST: dict[str, dict[int, Callable[[np.ndarray], np.ndarray]]] = {
    "abs": {0: _away_from_zero(0.3)},
    "sign": {0: _away_from_zero(0.3)},
    "cbrt": {0: _away_from_zero(0.3)},
    "pow_int_exponent": {0: _away_from_zero(0.5)},
    "atan2": {0: _away_from_zero(0.3), 1: _away_from_zero(0.3)},
    # out-of-bounds rows are NaN in the primal (JAX's fill) but 0 in the linear map
    "gather_take_fill": {1: lambda i: np.clip(i, 0, 1)},
    "floor": {0: _away_from_jumps(0.0)},
    "ceil": {0: _away_from_jumps(0.0)},
    "round_away_from_zero": {0: _away_from_jumps(0.5)},
    "round_to_nearest_even": {0: _away_from_jumps(0.5)},
    **{name: {0: _spread} for name in ("sort_1d", "sort_dim0", "sort_key_val")},
}

#: entry name prefix -> value domain for every operand (instead of the entry's own)
DOMAIN = {"convert_element_type_to_": Dom()}

#: entry name -> check_grads keyword overrides (low-precision results need a larger step)
GRAD_KW: dict[str, dict[str, Any]] = {
    # linear (no truncation error), between dtypes of different precision (rounding error)
    **{f"convert_element_type_to_{dst}": {"eps": 0.25} for dst in (
        "float32", "float64", "complex64", "complex128")},
    # half-precision values (widened to float32, see `widened`)
    **{f"convert_element_type_to_{dst}": {"eps": 1.0, "atol": 3e-2, "rtol": 3e-2}
       for dst in ("float16", "bfloat16")},
}


def widened(f: Callable[..., Any]) -> Callable[..., Any]:
    """f with half-precision results converted to float32: inner products and differences of
    bfloat16 values would round away the derivative being checked."""
    def wide(*xs: Any) -> Any:
        out = f(*xs)
        if np.dtype(out.dtype).itemsize == 2:
            return lax.convert_element_type(out, np.float32)
        return out
    return wide


def grad_kw(case: OpCase, dtype: str) -> dict[str, Any]:
    """Central differences in 32-bit arithmetic lose about eps_machine / eps of accuracy: a
    step of 1e-3 there (JAX's default 1e-4 for 64 bits)."""
    kw = {"eps": 1e-3} if dtype in ("float32", "complex64") else {}
    kw.update(GRAD_KW.get(case.name, {}))
    return kw


#: (entry, dtype kind) -> why its derivative is not the numerical one (JAX's rule, kept)
NOT_NUMERICAL = {
    ("sign", "c"): "JAX's sign rule is zero, also for complex x where x/|x| is not constant",
    ("clamp", "c"): "JAX's clamp rule compares with gt/lt, which reject complex operands",
    **{("scatter_mul", k): "JAX differentiates scatter_mul only with unique_indices=True"
       for k in "fc"},
}


def ad_instances() -> list[Any]:
    out = []
    for case in OPS:
        if not case.differentiable:
            continue
        for dtype in AD_DTYPES:
            if (case.name, DTYPES[dtype].kind) in NOT_NUMERICAL:
                continue
            if dtype in case.dtypes and _diff_positions(case, dtype):
                out.append(pytest.param((case, dtype), id=f"{case.name}-{dtype}"))
    return out


def _diff_positions(case: OpCase, dtype: str) -> list[int]:
    """Operands of inexact dtype (the others are held constant)."""
    return [i for i, d in enumerate(case.operand_dtypes(dtype))
            if DTYPES[d].kind in "fc" or d == "bfloat16"]


def _shapes(case: OpCase) -> list[tuple]:
    """The entry's shapes with no empty operand."""
    return [s for s in case.shapes if all(int(np.prod(x)) for x in s)]


def ad_args(case: OpCase, dtype: str, shapes: tuple) -> list[np.ndarray]:
    rng = np.random.default_rng(seed_for("ad", case.name, dtype, shapes))
    args = []
    for i, (shape, name) in enumerate(zip(shapes, case.operand_dtypes(dtype))):
        dom = next((d for prefix, d in DOMAIN.items() if case.name.startswith(prefix)),
                   case.dom(i))
        x = draw(rng, shape, name, _smooth(dom))
        adjust = ADJUST.get(case.name, {}).get(i)
        args.append(adjust(x) if adjust else x)
    return args


def close_over(case: OpCase, args: Sequence[np.ndarray], positions: Sequence[int],
               inexact_outputs: bool = False) -> Callable[..., Any]:
    """case.fn as a function of the operands at `positions` only (of a multiple-results
    entry, optionally only its inexact results)."""
    def f(*xs: Any) -> Any:
        full = list(args)
        for i, x in zip(positions, xs):
            full[i] = x
        out = case.fn(*full)
        if case.multiple and inexact_outputs:
            return [o for o in out if pyjax.dtypes.issubdtype(o.dtype, np.inexact)]
        return out
    return f


@pytest.fixture
def inst(request: Any) -> Any:
    case, dtype = request.param
    with x64_mode(True) if case.needs_x64(dtype) else contextlib.nullcontext():
        yield case, dtype


def _require(prim_name: str, rule: str) -> None:
    if getattr(registry[prim_name], rule, None) is None:
        pytest.skip(f"'{prim_name}' has no {rule} rule yet")


# ---------------------------------------------------------------------------------------------
# (1) numerical derivatives, order 2, forward and reverse
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("inst", ad_instances(), indirect=True)
def test_derivatives_match_finite_differences(inst: Any) -> None:
    case, dtype = inst
    _require(case.prim, "jvp")
    positions = _diff_positions(case, dtype)
    kw = grad_kw(case, dtype)
    # every shape for real dtypes; the last (largest) one for complex dtypes, to save time
    for shapes in _shapes(case)[-1:] if DTYPES[dtype].kind == "c" else _shapes(case):
        args = ad_args(case, dtype, shapes)
        f = close_over(case, args, positions, inexact_outputs=True)
        if not case.multiple:
            f = widened(f)
        check_grads(f, [args[i] for i in positions], order=2, modes=("fwd", "rev"), **kw)


def test_polygamma_derivative_in_x(x64: Any) -> None:
    """polygamma(m, x) is differentiable in x (polygamma(m + 1, x)), not in m."""
    m = np.array([0.0, 1.0, 2.0])
    x = np.array([0.7, 1.5, 3.0])
    from pyjax._src.primitives.elementwise import polygamma
    check_grads(lambda x: polygamma(m, x), (x,), order=2)
    with pytest.raises(ValueError, match="polygamma gradient with respect to m"):
        pyjax.jvp(lambda m: polygamma(m, x), (m,), (np.ones(3),))


def test_check_grads_detects_a_wrong_rule() -> None:
    """A primitive with a deliberately wrong derivative fails both checks (fwd and rev)."""
    from pyjax._src.primitives._rules import make_primitive
    from pyjax._src.transforms import ad
    wrong = make_primitive("wrong_sin_for_test", np.sin, lambda x: x)
    try:
        ad.defjvp(wrong, lambda g, x: lax.mul(g, lax.sin(x)))  # should be cos
        wrong.transpose = None
        x = np.array([0.3, 0.9, -0.4], np.float32)
        assert np.allclose(wrong.bind(x), np.sin(x))
        for mode in ("fwd", "rev"):
            with pytest.raises(AssertionError):
                check_grads(wrong.bind, (x,), order=1, modes=(mode,))
        check_grads(lax.sin, (x,), order=2)
    finally:
        del registry["wrong_sin_for_test"]


def test_check_jvp_and_vjp_directly() -> None:
    f = lambda x, y: lax.mul(lax.sin(x), y)  # noqa: E731
    args = (np.array([0.2, 0.5], np.float32), np.array([1.5, -0.5], np.float32))
    check_jvp(f, lambda p, t: pyjax.jvp(f, p, t), args)
    check_vjp(f, lambda *a: pyjax.vjp(f, *a), args)
    with pytest.raises(AssertionError, match="tangent"):
        check_jvp(f, lambda p, t: (f(*p), lax.mul(f(*t), 2.0)), args)


# ---------------------------------------------------------------------------------------------
# (2) transposes of linear primitives are adjoints
# ---------------------------------------------------------------------------------------------

#: primitives linear in each of their `linear` operands separately (the others fixed); the
#: other entries are linear in all their `linear` operands jointly
BILINEAR = {"mul", "dot_general"}


def linear_instances() -> list[Any]:
    out = []
    for case in OPS:
        groups = [(i,) for i in case.linear] if case.prim in BILINEAR else [case.linear]
        for positions in groups if case.linear else []:
            for dtype in ("float32", "complex64", "float64"):
                if dtype in case.dtypes and all(
                        case.operand_dtypes(dtype)[i] == dtype for i in positions):
                    tag = "-".join(map(str, positions))
                    out.append(pytest.param((case, dtype), positions,
                                            id=f"{case.name}-{tag}-{dtype}"))
    return out


def _inner(a: Any, b: Any) -> tuple[float, float]:
    """Re sum(a * b), the real bilinear form transposes are adjoint for (real, imag and conj
    are only R-linear; no conjugate: transposition is not conjugation), and sum |a| |b|."""
    a = np.asarray(a).astype(np.complex128)
    b = np.asarray(b).astype(np.complex128)
    return float(np.real(np.sum(a * b))), float(np.sum(np.abs(a) * np.abs(b)))


def _resolution(*arrays: Any) -> float:
    """The coarsest machine epsilon among the arrays' dtypes."""
    return max(float(pyjax.dtypes.finfo(np.real(np.zeros((), a.dtype)).dtype).eps)
               for a in arrays)


@pytest.mark.parametrize("inst,positions", linear_instances(), indirect=["inst"])
def test_transpose_is_adjoint(inst: Any, positions: tuple) -> None:
    """The transpose of the map from the operands at `positions` (the others held fixed),
    taken by vjp: its linearized jaxpr is what grad transposes (linear_transpose would stage
    the primitive itself, and scatter's own transpose wants unique indices, as in JAX)."""
    case, dtype = inst
    _require(case.prim, "transpose")
    for shapes in case.shapes:
        args = ad_args(case, dtype, shapes)
        f = close_over(case, args, positions)
        rng = np.random.default_rng(seed_for("transpose", case.name, positions, dtype, shapes))
        tangents = [draw(rng, np.shape(args[i]), dtype, Dom()) for i in positions]
        outs = f(*tangents)
        outs = list(outs) if case.multiple else [outs]
        cts = [draw(rng, tuple(o.shape), np.dtype(o.dtype).name, Dom()) for o in outs]
        _, pullback = pyjax.vjp(f, *[args[i] for i in positions])
        cts_in = pullback(cts if case.multiple else cts[0])
        assert len(cts_in) == len(tangents)
        for ct_in, t in zip(cts_in, tangents):
            assert ct_in.shape == t.shape and ct_in.dtype == t.dtype, (ct_in, t)
        lhs = [_inner(c, o) for c, o in zip(cts, outs)]
        rhs = [_inner(c, t) for c, t in zip(cts_in, tangents)]
        scale = 1 + sum(m for _, m in lhs + rhs)
        tol = 20 * _resolution(*tangents, *cts_in, *outs, *cts)
        got, want = sum(v for v, _ in lhs), sum(v for v, _ in rhs)
        assert abs(got - want) <= tol * scale, (
            f"{case.name} {shapes}: <ct, f(t)> = {got}, <f^T(ct), t> = {want}")


# ---------------------------------------------------------------------------------------------
# (3) JAX's conventions
# ---------------------------------------------------------------------------------------------

def test_kink_conventions() -> None:
    grad = pyjax.grad
    assert float(grad(lax.abs)(0.0)) == 1.0 and float(grad(jnp.abs)(-0.0)) == 1.0
    assert float(grad(lambda x: jnp.maximum(x, 0.0))(0.0)) == 0.5  # balanced tie, as in JAX
    assert float(grad(lambda x: jnp.minimum(x, 0.0))(0.0)) == 0.5
    assert float(grad(lambda x: jnp.maximum(x, 0.0))(-1.0)) == 0.0
    assert np.isinf(float(grad(jnp.sqrt)(0.0)))
    assert float(grad(lambda x: lax.clamp(0.0, x, 1.0))(1.0)) == 0.0
    assert float(grad(lambda x: lax.clamp(0.0, x, 1.0))(0.5)) == 1.0
    np.testing.assert_array_equal(grad(jnp.max)(jnp.array([1.0, 3.0, 3.0, 2.0])),
                                  [0.0, 0.5, 0.5, 0.0])
    np.testing.assert_array_equal(grad(jnp.min)(jnp.array([1.0, 1.0, 3.0, 1.0])),
                                  np.array([1, 1, 0, 1], np.float32) / np.float32(3))
    np.testing.assert_array_equal(
        grad(lambda x: lax.reduce_max(x, (1,)).sum())(jnp.array([[2.0, 2.0], [1.0, 0.0]])),
        [[0.5, 0.5], [1.0, 0.0]])
    assert float(grad(lambda x: lax.pow(x, np.int32(0)))(0.0)) == 0.0
    assert float(grad(lambda x: lax.integer_pow(x, 0))(3.0)) == 0.0


def test_integer_valued_primitives_have_float0_tangents() -> None:
    float0 = pyjax.dtypes.float0
    x = jnp.array([0.4, -1.7, 2.2])
    for fn in (lambda x: lax.convert_element_type(x, np.int32), lambda x: lax.gt(x, 0.0),
               lax.is_finite, lambda x: lax.argmax(x, 0, np.int32)):
        _, t = pyjax.jvp(fn, (x,), (jnp.ones(3),))
        assert t.dtype == float0, fn
    for fn in (lax.floor, lax.ceil, lax.round, lax.sign):
        _, t = pyjax.jvp(fn, (x,), (jnp.ones(3),))
        assert t.dtype == x.dtype and not np.any(np.asarray(t)), fn
    n = jnp.array([3, 5], np.int32)
    g = pyjax.grad(lambda x, n: (x * lax.convert_element_type(n, np.float32)).sum(),
                   (0, 1), allow_int=True)(jnp.ones(2), n)
    np.testing.assert_array_equal(g[0], [3.0, 5.0])
    assert g[1].dtype == float0 and g[1].shape == (2,)


def test_int_target_conversion_transposes_to_zero() -> None:
    """A convert to an integer type carries no cotangent back."""
    g = pyjax.grad(lambda x: (x * 2.0).sum() + lax.convert_element_type(
        lax.convert_element_type(x, np.int32), np.float32).sum())(jnp.array([1.5, 2.5]))
    np.testing.assert_array_equal(g, [2.0, 2.0])


def test_dot_general_preferred_element_type_gradient() -> None:
    """Half-precision operands with a float32 result: cotangents come back in float16."""
    a = np.array([[0.5, 1.0, -1.5], [2.0, 0.25, 1.0]], np.float16)
    b = np.array([[1.0, -0.5], [0.5, 2.0], [1.5, 1.0]], np.float16)
    f = lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())),  # noqa: E731
                                     preferred_element_type=np.float32).sum()
    ga, gb = pyjax.grad(f, (0, 1))(a, b)
    assert ga.dtype == np.float16 and gb.dtype == np.float16
    np.testing.assert_allclose(ga, np.ones((2, 2), np.float32) @ b.astype(np.float32).T)
    np.testing.assert_allclose(gb, a.astype(np.float32).T @ np.ones((2, 2), np.float32))


def test_second_order_through_rules() -> None:
    """Rules are written with lax functions, so derivatives of derivatives work."""
    x = jnp.array(0.7)
    np.testing.assert_allclose(pyjax.grad(pyjax.grad(pyjax.grad(lax.tanh)))(x),
                               -2 * (1 - np.tanh(0.7) ** 2) * (1 - 3 * np.tanh(0.7) ** 2),
                               rtol=1e-5)
    np.testing.assert_allclose(pyjax.grad(pyjax.grad(lax.digamma))(x),
                               __import__("scipy.special").special.polygamma(2, 0.7),
                               rtol=1e-4)
    h = pyjax.hessian(lambda w: (lax.logistic(jnp.dot(jnp.ones((2, 3)), w)) ** 2).sum())(
        jnp.array([0.1, -0.2, 0.3]))
    assert h.shape == (3, 3)
    np.testing.assert_allclose(h, np.asarray(h).T, rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# (4) printed jaxprs against JAX
# ---------------------------------------------------------------------------------------------

RECORDS = {(r["name"], r["x64"]): r for r in json.load(
    open(os.path.join(HERE, "data", "ad_jaxprs.json")))["records"]}

def _ad_params(x64: bool) -> list[Any]:
    return [pytest.param(name, fn, args, id=name)
            for name, fn, args in record_ad.ad_cases(pyjax, jnp, lax, np, x64=x64)]


def _compare(name: str, fn: Callable, args: Sequence[Any], x64: bool) -> None:
    record = RECORDS[(name, x64)]
    got = str(pyjax.make_jaxpr(fn)(*args))
    assert got == record["jaxpr"]


@pytest.mark.parametrize("name,fn,args", _ad_params(False))
def test_ad_jaxpr_matches_jax(name: str, fn: Callable, args: Sequence[Any]) -> None:
    _compare(name, fn, args, False)


@pytest.mark.parametrize("name,fn,args", _ad_params(True))
def test_ad_jaxpr_matches_jax_x64(name: str, fn: Callable, args: Sequence[Any], x64: Any
                                  ) -> None:
    _compare(name, fn, args, True)
