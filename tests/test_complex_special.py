"""pyjax's complex elementwise functions against JAX's recorded results at special values.

tests/data/complex_special.json is written by tests/oracle/record_complex_special.py.  Where
JAX gives a NaN, an infinity or a zero (of either sign) pyjax must give the same part bit for
bit (NaNs of any sign agree); finite non-zero parts may differ by a few ulps of the complex
result's magnitude (the real building blocks, log, atan2, sin..., are NumPy's, not XLA's).
"""
import json
import os
import sys

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "oracle"))
import record_complex_special as rec  # noqa: E402

with open(os.path.join(os.path.dirname(__file__), "data", "complex_special.json")) as _f:
    RECORDS = json.load(_f)["records"]

#: allowed error of a finite part, in eps of the result's magnitude
TOLERANCE = 8


def _decode(encoded: list, dtype: np.dtype) -> np.ndarray:
    real = np.finfo(dtype).dtype
    uint = np.uint32 if real == np.float32 else np.uint64
    parts = [np.array([int(v, 16) for v in p], uint).view(real) for p in encoded]
    if len(parts) == 1:
        return parts[0]
    out = np.empty(parts[0].shape, dtype)
    out.real, out.imag = parts
    return out


def _mismatches(got: np.ndarray, want: np.ndarray, cond: float | np.ndarray = 1) -> list:
    """Indices where a special part differs in bits or a finite part beyond TOLERANCE (times
    the condition number `cond`)."""
    got, want = np.asarray(got), np.asarray(want)
    eps = np.finfo(want.real.dtype).eps
    finite = [np.where(np.isfinite(p), p, 0).astype(np.float64) for p in (want.real, want.imag)]
    scale = np.hypot(*finite)  # the magnitude of the finite parts
    bad = np.zeros(want.shape, bool)
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        nan = np.isnan(g) & np.isnan(w)
        special = ~np.isfinite(w) | (w == 0) | ~np.isfinite(g) | (g == 0)
        exact = (g == w) & (np.signbit(g) == np.signbit(w))
        with np.errstate(invalid="ignore"):
            close = np.abs(g.astype(np.float64) - w) <= TOLERANCE * cond * eps * scale
        bad |= ~nan & np.where(special, ~exact, ~close)
    return list(np.flatnonzero(bad))


@pytest.fixture(scope="module", autouse=True)
def _x64():
    pyjax.config.update("jax_enable_x64", True)
    yield
    pyjax.config.update("jax_enable_x64", False)


def _cases(names: tuple) -> list:
    return [(d, s, n, m) for d in rec.DTYPES for s in ("grid", "random") for n in names
            for m in ("eager", "jit")]


@pytest.mark.parametrize("dtype,set_name,name,mode", _cases(rec.UNARY))
def test_unary(dtype, set_name, name, mode):
    x = rec.inputs(np)[set_name].astype(dtype)
    fn = getattr(jnp, name)
    got = np.asarray(pyjax.jit(fn)(x) if mode == "jit" else fn(x))
    want = _decode(RECORDS[f"{dtype}/{set_name}/{name}/{mode}"], np.dtype(dtype))
    assert got.dtype == want.dtype
    bad = _mismatches(got, want)
    assert not bad, [(x[i], got[i], want[i]) for i in bad[:5]]


@pytest.mark.parametrize("dtype,set_name,name,mode", _cases(rec.BINARY))
def test_binary(dtype, set_name, name, mode):
    x = rec.inputs(np)[set_name].astype(dtype)
    a, b = rec.pairs(np, x) if set_name == "grid" else (x, np.roll(x, 1))
    fn = getattr(jnp, name)
    got = np.asarray(pyjax.jit(fn)(a, b) if mode == "jit" else fn(a, b))
    want = _decode(RECORDS[f"{dtype}/{set_name}/{name}/jit"], np.dtype(dtype))
    cond = 1
    if name == "power" and set_name == "random":  # x^y = e^(y log x): errors grow with |y log x|
        cond = 1 + np.abs(b) * (1 + np.abs(np.log(np.abs(a))) + np.pi)
    bad = _mismatches(got, want, cond)
    assert not bad, [(a[i], b[i], got[i], want[i]) for i in bad[:5]]


def test_lax_complex_keeps_signed_zeros_and_infinities():
    """lax.complex builds the parts directly (x + 1j*y would give nan for y = inf)."""
    re = np.array([0.0, -0.0, 1.0], np.float32)
    im = np.array([-0.0, np.inf, -0.0], np.float32)
    out = np.asarray(pyjax.lax.complex(re, im))
    assert np.array_equal(np.signbit(out.real), np.signbit(re))
    assert np.array_equal(np.signbit(out.imag), np.signbit(im))
    assert out.imag[1] == np.inf and out.real[1] == -0.0
