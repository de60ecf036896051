"""pyjax.test_util: check automatic derivatives against numerical ones (JAX's jax.test_util).

    check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None)
    check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg="")
    check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg="")

The method is JAX's: one random direction (NumPy RandomState(0)) per check, central
differences with step `eps`, and for reverse mode the identity <J t, c> == <t, J^T c>.
Tolerances are per dtype (the defaults below), and are multiplied by the number of elements
compared, as JAX does.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import ml_dtypes
import numpy as np

__all__ = ["check_grads", "check_jvp", "check_vjp"]

#: finite-difference step
EPS = 1e-4

_PY_SCALAR_DTYPES = {bool: np.dtype(np.bool_), int: np.dtype(np.int64),
                     float: np.dtype(np.float64), complex: np.dtype(np.complex128)}
_BF16 = np.dtype(ml_dtypes.bfloat16)

#: tolerance for exact comparisons, per dtype (used for dtypes without a gradient tolerance)
_EXACT_TOLERANCE: dict[np.dtype, float] = {
    **{np.dtype(t): 0 for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                np.uint16, np.uint32, np.uint64)},
    _BF16: 1e-2, np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-6,
    np.dtype(np.float64): 1e-15, np.dtype(np.complex64): 1e-6,
    np.dtype(np.complex128): 1e-15,
}

#: default atol and rtol of the gradient checks, per dtype
default_gradient_tolerance: dict[np.dtype, float] = {
    _BF16: 1e-1, np.dtype(np.float16): 1e-2, np.dtype(np.float32): 2e-3,
    np.dtype(np.float64): 1e-5, np.dtype(np.complex64): 1e-3, np.dtype(np.complex128): 1e-5,
}


def _float0() -> np.dtype:
    from pyjax._src.core import dtypes
    return np.dtype(dtypes.float0)


def _tree_map(f: Callable, *trees: Any) -> Any:
    from pyjax.tree_util import tree_map
    return tree_map(f, *trees)


def _leaves(tree: Any) -> list:
    from pyjax.tree_util import tree_leaves
    return tree_leaves(tree)


def _is_py_scalar(x: Any) -> bool:
    return type(x) in _PY_SCALAR_DTYPES


def _dtype_of(x: Any) -> np.dtype:
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    if type(x) in _PY_SCALAR_DTYPES:
        from pyjax._src.core import dtypes
        return dtypes.canonicalize_dtype(_PY_SCALAR_DTYPES[type(x)])
    return np.asarray(x).dtype


def _canonical(dtype: np.dtype) -> np.dtype:
    from pyjax._src.core import dtypes
    return dtypes.canonicalize_dtype(dtype)


def _merged(tol: Any) -> Any:
    """User tolerance over the defaults: a number is used as is, a dict overrides per dtype."""
    if tol is None:
        return default_gradient_tolerance
    if not isinstance(tol, dict):
        return tol
    merged = dict(default_gradient_tolerance)
    merged.update((np.dtype(k), v) for k, v in tol.items())
    return merged


def _tol_for(dtype: np.dtype, tol: Any) -> float:
    if not isinstance(tol, dict):
        return tol
    dtype = _canonical(dtype)
    if dtype in tol:
        return tol[dtype]
    if dtype == _float0():
        return 0
    return _EXACT_TOLERANCE[dtype]


def _assert_close_leaf(a: Any, b: Any, atol: Any, rtol: Any, err_msg: str) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, f"{err_msg}: shapes {a.shape} and {b.shape} differ"
    if a.dtype == b.dtype == _float0():
        np.testing.assert_array_equal(a, b, err_msg=err_msg)
        return
    at = max(_tol_for(a.dtype, atol), _tol_for(b.dtype, atol)) * a.size
    rt = max(_tol_for(a.dtype, rtol), _tol_for(b.dtype, rtol)) * b.size
    if a.dtype == _BF16:
        a = a.astype(np.float32)
    if b.dtype == _BF16:
        b = b.astype(np.float32)
    kwargs = {}
    if at:
        kwargs["atol"] = at
    if rt:
        kwargs["rtol"] = rt
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(a, b, err_msg=err_msg, **kwargs)


def check_close(xs: Any, ys: Any, atol: Any = None, rtol: Any = None, err_msg: str = "") -> None:
    """Leafwise closeness of two pytrees, with per-dtype tolerances scaled by size."""
    _tree_map(lambda x, y: _assert_close_leaf(x, y, atol, rtol, err_msg), xs, ys)


def _check_dtypes_match(xs: Any, ys: Any) -> None:
    from pyjax._src.config import config

    def check(x: Any, y: Any) -> None:
        dx, dy = _dtype_of(x), _dtype_of(y)
        if not config.x64:
            dx, dy = _canonical(dx), _canonical(dy)
        assert dx == dy, f"dtype mismatch: {dx} vs {dy}"
    _tree_map(check, xs, ys)


def inner_prod(xs: Any, ys: Any) -> Any:
    """sum over leaves of Re <conj(x), y>."""
    def dot(x: Any, y: Any) -> Any:
        return np.real(np.dot(np.conj(np.asarray(x)).reshape(-1), np.asarray(y).reshape(-1)))
    return functools.reduce(np.add, _leaves(_tree_map(dot, xs, ys)))


def _keep_type(op: Callable) -> Callable:
    """op on leaves, the result in the first operand's dtype (a Python scalar stays one)."""
    def leaf(*xs: Any) -> Any:
        out = np.array(op(*xs), dtype=_dtype_of(xs[0]))
        return out.item() if all(_is_py_scalar(x) for x in xs) else out
    return lambda *trees: _tree_map(leaf, *trees)


_add = _keep_type(lambda x, y: x + y)
_sub = _keep_type(lambda x, y: x - y)
_conj = _keep_type(np.conj)


def _safe_sub(xs: Any, ys: Any) -> Any:
    """x - y with inf - inf = 0 (equal values subtract to zero)."""
    def leaf(x: Any, y: Any) -> Any:
        dtype = _dtype_of(x)
        with np.errstate(invalid="ignore"):
            return np.where(np.equal(x, y), np.array(0, dtype), np.subtract(x, y, dtype=dtype))
    return _tree_map(leaf, xs, ys)


def _scale(xs: Any, a: float) -> Any:
    def leaf(x: Any) -> Any:
        dtype = _dtype_of(x)
        out = np.multiply(x, np.array(a, dtype=dtype), dtype=dtype)
        return out.item() if _is_py_scalar(x) else out
    return _tree_map(leaf, xs)


def rand_like(rng: np.random.RandomState, x: Any) -> Any:
    """Standard normal values of x's shape and dtype (complex: independent real and imag)."""
    shape, dtype = np.shape(x), _dtype_of(x)
    out = np.asarray(rng.randn(*shape), dtype=dtype)
    if np.issubdtype(dtype, np.complexfloating):
        out = out + dtype.type(1j) * np.asarray(rng.randn(*shape), dtype=dtype)
    return out.item() if _is_py_scalar(x) else out


def numerical_jvp(f: Callable, primals: Sequence[Any], tangents: Sequence[Any],
                  eps: float = EPS) -> Any:
    """Central difference (f(x + eps t) - f(x - eps t)) / (2 eps)."""
    step = _scale(tangents, eps)
    above = f(*_add(primals, step))
    below = f(*_sub(primals, step))
    return _scale(_safe_sub(above, below), 0.5 / eps)


def _with_msg(err_msg: str, what: str) -> str:
    return f"{err_msg} {what}" if err_msg else what


def check_jvp(f: Callable, f_jvp: Callable, args: Sequence[Any], atol: Any = None,
              rtol: Any = None, eps: float = EPS, err_msg: str = "") -> None:
    """f_jvp(args, tangents) (usually functools.partial(pyjax.jvp, f)) against central
    differences of f in one random direction."""
    atol, rtol = _merged(atol), _merged(rtol)
    rng = np.random.RandomState(0)
    tangent = _tree_map(lambda x: rand_like(rng, x), args)
    v_out, t_out = f_jvp(args, tangent)
    _check_dtypes_match(v_out, t_out)
    v_expected = f(*args)
    _check_dtypes_match(v_out, v_expected)
    t_expected = numerical_jvp(f, args, tangent, eps=eps)
    check_close(v_out, v_expected, atol=atol, rtol=rtol, err_msg=_with_msg(err_msg, "primal"))
    check_close(t_out, t_expected, atol=atol, rtol=rtol, err_msg=_with_msg(err_msg, "tangent"))


def check_vjp(f: Callable, f_vjp: Callable, args: Sequence[Any], atol: Any = None,
              rtol: Any = None, eps: float = EPS, err_msg: str = "") -> None:
    """f_vjp(*args) -> (out, vjp_fun) (usually functools.partial(pyjax.vjp, f)): checks
    <J t, c> == <t, J^T c> for random t and c, J t by central differences."""
    atol, rtol = _merged(atol), _merged(rtol)
    rng = np.random.RandomState(0)
    v_out, vjp_fun = f_vjp(*args)
    check_close(v_out, f(*args), atol=atol, rtol=rtol, err_msg=_with_msg(err_msg, "primal"))
    tangent = _tree_map(lambda x: rand_like(rng, x), args)
    tangent_out = numerical_jvp(f, args, tangent, eps=eps)
    cotangent = _tree_map(lambda x: rand_like(rng, x), v_out)
    cotangent_out = _conj(vjp_fun(_conj(cotangent)))
    check_close(inner_prod(tangent, cotangent_out), inner_prod(tangent_out, cotangent),
                atol=atol, rtol=rtol, err_msg=_with_msg(err_msg, "cotangent projection"))


def check_grads(f: Callable, args: Sequence[Any], order: int,
                modes: Sequence[str] = ("fwd", "rev"), atol: Any = None, rtol: Any = None,
                eps: float | None = None) -> None:
    """Forward ("fwd"), reverse ("rev") and linearize ("lin") derivatives of f at args, and
    those of the derivative functions themselves up to `order`, against finite differences."""
    from pyjax import jvp, linearize, vjp
    args = tuple(args)
    eps = eps or EPS
    jvp_check = functools.partial(check_jvp, atol=atol, rtol=rtol, eps=eps)
    vjp_check = functools.partial(check_vjp, atol=atol, rtol=rtol, eps=eps)

    def jvp_via_linearize(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any]
                          ) -> tuple:
        out, f_lin = linearize(fun, *primals)
        return out, f_lin(*tangents)

    def recurse(fun: Callable, fun_args: tuple, n: int, msg: str = "") -> None:
        if "fwd" in modes:
            sub_msg = f"JVP of {msg}" if msg else "JVP"
            jvp_check(fun, functools.partial(jvp, fun), fun_args, err_msg=sub_msg)
            if n > 1:
                recurse(functools.partial(jvp, fun), (fun_args, fun_args), n - 1, sub_msg)
        if "rev" in modes:
            sub_msg = f"VJP of {msg}" if msg else "VJP"
            vjp_check(fun, functools.partial(vjp, fun), fun_args, err_msg=sub_msg)
            if n > 1:
                def pulled_back(*xs: Any) -> Any:
                    out, pullback = vjp(fun, *xs)
                    return pullback(out)
                recurse(pulled_back, fun_args, n - 1, sub_msg)
        if "lin" in modes:
            sub_msg = f"LIN of {msg}" if msg else "LIN"
            jvp_check(fun, functools.partial(jvp_via_linearize, fun), fun_args, err_msg=sub_msg)
            if n > 1:
                recurse(functools.partial(jvp_via_linearize, fun), (fun_args, fun_args), n - 1,
                        sub_msg)

    recurse(f, args, order)
