"""Fuzz: jnp reductions (sum, prod, mean, var, std, min, max, argmin, argmax, any, all, cumsum,
cumprod and the nan-reductions) with axis / keepdims / where / dtype / ddof, eagerly and under
jit, against NumPy on float64/complex128 copies.  Result dtypes are JAX's (recorded in
tests/data/fuzz.json); errors must be the classes JAX raises (ValueError for an empty min/max/
argmin, a where= without initial for min/max); value mismatches only as listed in
fuzz_strategies.KNOWN_DIFFERENCES."""
from __future__ import annotations

import warnings
from typing import Any

import ml_dtypes
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import pyjax.numpy as jnp
from fuzz_strategies import (DTYPE_REDUCTIONS, REDUCTIONS, REQUESTED, X32, arrays, assert_values,
                             cast, fuzz_settings, load_recorded, np_dtype, reduction_key,
                             run_both, same_bits, wide)

DTYPES = load_recorded()["reduction_dtypes"]
CUMULATIVE = {"cumsum", "cumprod", "nancumsum", "nancumprod"}
ARG = {"argmin", "argmax", "nanargmin", "nanargmax"}
MOMENTS = {"var", "std", "nanvar", "nanstd"}
# NumPy needs an initial value to reduce with where= for these (so does JAX: both raise).
NO_IDENTITY = {"min", "max", "nanmin", "nanmax"}


def _reference(name: str, x: np.ndarray, kw: dict, out_dtype: np.dtype) -> np.ndarray:
    """NumPy on the input in the dtype JAX reduces in (float64/complex128 for inexact ones)."""
    source = x
    if "dtype" in kw:
        source = cast(wide(x), kw["dtype"]) if np.dtype(kw["dtype"]).kind in "iub" else x
    if out_dtype.kind in "fc" or out_dtype == np_dtype("bfloat16") or name in ARG:
        source = wide(source)
        if source.dtype.kind in "iub" and name not in ARG and name not in ("min", "max"):
            source = source.astype(np.float64)
    elif out_dtype.kind in "iu" and name not in ARG:
        source = source.astype(out_dtype)  # integer sums wrap at 32 bits as JAX's do
    np_kw = {k: v for k, v in kw.items() if k != "dtype"}
    if name == "mean" and out_dtype.kind in "biu":  # summed in the integer type, wrapping
        with np.errstate(all="ignore"):
            return np.mean(source, dtype=out_dtype, **np_kw).astype(out_dtype)
    with np.errstate(all="ignore"):
        out = getattr(np, name)(source, **np_kw)
    if name in MOMENTS:
        count = np.sum(np.ones(x.shape), axis=kw.get("axis"), keepdims=kw.get("keepdims", False),
                       where=kw.get("where", True)) if name[:3] != "nan" else \
            np.sum(~np.isnan(wide(x).real), axis=kw.get("axis"),
                   keepdims=kw.get("keepdims", False), where=kw.get("where", True))
        # KNOWN_DIFFERENCES['var_ddof_at_least_count']
        out = np.where(count - kw.get("ddof", 0) <= 0, np.nan, out)
    return cast(out, out_dtype)


@st.composite
def cases(draw: Any) -> tuple[np.ndarray, dict]:
    """An array and the keyword arguments to try (each reduction takes those it accepts)."""
    kind = draw(st.sampled_from(X32))
    x = draw(arrays(kind, finite=draw(st.booleans())))
    kw: dict = {"axis": draw(st.sampled_from([None] + list(range(-x.ndim, x.ndim))))}
    if draw(st.booleans()):
        kw["keepdims"] = True
    if draw(st.integers(0, 3)) == 0:
        kw["where"] = draw(arrays("bool", x.shape))
    if draw(st.integers(0, 3)) == 0:
        kw["dtype"] = draw(st.sampled_from(REQUESTED))
    if draw(st.booleans()):
        kw["ddof"] = draw(st.integers(0, 3))
    return x, kw


def _accepted(name: str, x: np.ndarray, kw: dict) -> dict:
    """The keyword arguments `name` takes (JAX and NumPy alike)."""
    out = {"axis": kw["axis"]}
    if name in CUMULATIVE and out["axis"] is None and x.ndim > 1:
        out["axis"] = 0
    if name not in CUMULATIVE and "keepdims" in kw:
        out["keepdims"] = True
    if name not in CUMULATIVE | ARG and "where" in kw:
        out["where"] = kw["where"]
    if name in DTYPE_REDUCTIONS and "dtype" in kw:
        out["dtype"] = kw["dtype"]
    if name in MOMENTS and "ddof" in kw:
        out["ddof"] = kw["ddof"]
    if name in MOMENTS and np_dtype(out.get("dtype") or "float32").kind in "biu":
        del out["dtype"]  # KNOWN_DIFFERENCES['var_with_integer_dtype'] (recorded examples)
    if name in ("mean", "nanmean") and np_dtype(out.get("dtype") or "float32").kind in "biu":
        # an integer mean that may count no elements divides by zero: JAX 0.10.2 dies of
        # SIGFPE compiling it (XLA constant folding), so there is nothing to match
        extent = x.size if out["axis"] is None else x.shape[out["axis"]]
        if "where" in out or extent == 0 or name == "nanmean":
            del out["dtype"]
    return out


def _numpy_error(name: str, x: np.ndarray, kw: dict) -> bool:
    """NumPy (and so JAX) raise ValueError: an empty min/max/argmin/argmax, or where= without
    an initial for a reduction with no identity."""
    axis = kw.get("axis")
    if name in NO_IDENTITY and "where" in kw:
        return True
    if name in NO_IDENTITY | ARG:
        empty = x.size == 0 if axis is None else x.shape[axis] == 0
        return empty
    return False


@fuzz_settings(100)
@given(cases())
def test_reductions(case):
    x, drawn = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in REDUCTIONS:
            check(name, x, _accepted(name, x, drawn))


def check(name: str, x: np.ndarray, kw: dict) -> None:
    """One reduction eagerly and under jit: JAX's dtype (or error class), NumPy's values."""
    requested = kw.get("dtype")
    expected = DTYPES[reduction_key(name, _kind(x), requested)]
    call_kw = dict(kw)
    if requested is not None:
        call_kw["dtype"] = np_dtype(requested)
    eager, jitted, e_err, j_err = run_both(lambda a: getattr(jnp, name)(a, **call_kw), x)
    if name in ARG and x.dtype.kind == "c" and not _numpy_error(name, x, kw):
        expected = "!TypeError"  # JAX's abstract rule passes; its lowering (lt/gt) raises
    if isinstance(expected, str) or _numpy_error(name, x, kw):
        want = expected[1:] if isinstance(expected, str) else "ValueError"
        assert type(e_err).__name__ == want and type(j_err).__name__ == want, \
            (name, kw, e_err, j_err)
        return
    assert e_err is None and j_err is None, (name, kw, e_err, j_err)
    assert [f"{np.dtype(eager.dtype).name}{'*' if eager.weak_type else ''}"] == expected
    same_bits(eager, jitted, f"{name} {kw}")
    if requested is not None:
        kw = {**kw, "dtype": np_dtype(requested)}
    want = _reference(name, x, kw, np.dtype(eager.dtype))
    n = max(x.size, 1)
    atol = _atol(name, x, kw, np.dtype(eager.dtype))
    assert_values(eager, want, rtol_scale=4 * n, atol=atol, what=f"{name} {kw}")


def _kind(x: np.ndarray) -> str:
    return "bfloat16" if x.dtype == np_dtype("bfloat16") else x.dtype.name


def _atol(name: str, x: np.ndarray, kw: dict, out: np.dtype) -> Any:
    """Per result element: cancellation in sums and moments makes the error scale with the
    magnitudes reduced (float32 accumulation, or bfloat16/float16 results)."""
    if (out.kind not in "fc" and out != np_dtype("bfloat16")) or name in ARG or \
            name in NO_IDENTITY or name in ("prod", "nanprod", "cumprod", "nancumprod"):
        return 0.0
    with np.errstate(all="ignore"):
        a = np.abs(wide(x)).astype(np.float64)
        a = np.where(np.isfinite(a), a, 0.0)
        if name in MOMENTS:
            a = a * a if "var" in name else a
        if "where" in kw:
            a = np.where(kw["where"], a, 0.0)
        axis = kw.get("axis")
        if name in CUMULATIVE:
            total = np.cumsum(a, axis=axis)
            total = total.reshape(x.shape) if axis is not None else total
        else:
            total = np.sum(a, axis=axis, keepdims=kw.get("keepdims", False))
            if "mean" in name or name in MOMENTS:
                total = total / max(1, x.size if axis is None else x.shape[axis]) * 4
    eps = float(ml_dtypes.finfo(out if out.kind != "c" else np.float32).eps)
    return 8 * eps * np.sqrt(total) if name in ("std", "nanstd") else 8 * eps * total
