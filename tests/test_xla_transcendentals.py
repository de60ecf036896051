"""float32 exp, exp2, expm1, log, log1p, log10, tanh, logistic, sin and cos give JAX's bits (XLA's
own code, or glibc's sinf/cosf, emulated by primitives/xla_math.py and emitted by
backend/tier1/xla_math.py): eager, under jit on tier 0 and under jit on tier 1, compared with
values recorded from JAX 0.10.2 (tests/oracle/record_transcendentals.py); float16 and bfloat16
eagerly; exp and log of short vectors alone (partly the C library's); and the native kernels
give the NumPy emulation's bits over a million inputs.  The same for erf, erfc, rsqrt, atan
(over array shapes too), pow, lgamma, digamma, asinh and acosh from
tests/oracle/record_special_transcendentals.py."""
import os
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.backend import fp_mode, tier0, tier1
from pyjax._src.backend.tier1 import engine
from pyjax._src.backend.tier1 import xla_math as native
from pyjax._src.primitives import xla_math

DATA = np.load(os.path.join(os.path.dirname(__file__), "data", "transcendentals.npz"))
NAMES = ("exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "tanh", "logistic", "sin",
         "cos", "sinh", "cosh", "asin", "acos", "asinh", "acosh", "atanh")
_JNP = {"logistic": pyjax.nn.sigmoid, "asin": jnp.arcsin, "acos": jnp.arccos,
        "asinh": jnp.arcsinh, "acosh": jnp.arccosh, "atanh": jnp.arctanh}
needs_tier1 = pytest.mark.skipif(tier1.reason() is not None,
                                 reason=f"tier 1 does not run here: {tier1.reason()}")


def _fn(name: str):
    return _JNP.get(name) or getattr(jnp, name)


def _recorded(name: str, dtype: str = "") -> tuple[np.ndarray, np.ndarray]:
    key = f"{name}/{dtype + '/' if dtype else ''}"
    if dtype:
        view = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}[dtype]
        return DATA[key + "x"].view(view), DATA[key + "y"]
    return DATA[key + "x"].view(np.float32), DATA[key + "y"]


def _assert_bits(got: np.ndarray, want_bits: np.ndarray, x: np.ndarray) -> None:
    got_bits = np.asarray(got).view(want_bits.dtype)
    bad = np.flatnonzero(got_bits != want_bits)
    assert bad.size == 0, (f"{bad.size} of {want_bits.size} differ, e.g. x={x[bad[:5]]!r}: "
                           f"{[hex(v) for v in got_bits[bad[:5]]]} vs JAX's "
                           f"{[hex(v) for v in want_bits[bad[:5]]]}")


@pytest.mark.parametrize("name", NAMES)
def test_eager_float32(name):
    x, want = _recorded(name)
    _assert_bits(_fn(name)(x), want, x)  # the NumPy emulation, or the kernel once compiled
    engine.wait()
    _assert_bits(_fn(name)(x), want, x)


@pytest.mark.parametrize("native_kernel", [False, True], ids=["tier0", "tier1"])
@pytest.mark.parametrize("name", NAMES)
def test_jit_float32(name, native_kernel, monkeypatch):
    if native_kernel and tier1.reason() is not None:
        pytest.skip(f"tier 1 does not run here: {tier1.reason()}")
    x, want = _recorded(name)
    pyjax.clear_caches()
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)  # every cluster blockwise, or a kernel
    monkeypatch.setattr(tier1, "ENABLED", native_kernel)
    try:
        pyjax.config.update("jax_compile_sync", True)
        f = pyjax.jit(_fn(name))
        got = f(x)
        kernels = f.lower(x).compile()._run.kernels.values()
        assert any(isinstance(k, tier1.Kernel) for k in kernels) == native_kernel
    finally:
        pyjax.config.update("jax_compile_sync", False)
        pyjax.clear_caches()
    _assert_bits(got, want, x)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", NAMES)
def test_eager_half(name, dtype):
    x, want = _recorded(name, dtype)
    got = np.asarray(_fn(name)(x))
    if name in ("log2", "log10") and dtype == "float16":
        # eager jnp.log2/log10 run log alone, whose float16 NaNs are the C library's in JAX
        # (fused in JAX's log2/log10, XLA's): only the NaNs' bits differ
        nan = np.isnan(got.astype(np.float32))
        assert (nan == np.isnan(want.view(np.float16).astype(np.float32))).all()
        got, want, x = got[~nan], want[~nan], x[~nan]
    _assert_bits(got, want, x)


@pytest.mark.parametrize("name", ["exp", "log"])
def test_alone_on_short_vectors(name):
    """jnp.exp/jnp.log of f32[n], n <= 16, each a computation of its own in JAX."""
    x, want = DATA[f"lone_{name}/x"].view(np.float32), DATA[f"lone_{name}/y"]
    got, start = [], 0
    for n in range(1, 17):
        for _ in range(20):
            got.append(np.asarray(getattr(jnp, name)(x[start:start + n])))
            start += n
    _assert_bits(np.concatenate(got), want, x)


def test_short_vectors_fused_are_xla_code():
    """exp of f32[3] fused with other work is XLA's code on every lane (logistic's exp)."""
    x, want = _recorded("logistic")
    got = np.concatenate([np.asarray(pyjax.nn.sigmoid(x[i:i + 3])) for i in range(0, 300, 3)])
    _assert_bits(got, want[:300], x[:300])


# ---------------------------------------------------------------------------------------------
# the native kernels against the NumPy emulation
# ---------------------------------------------------------------------------------------------

KERNELS = ("exp", "logistic", "tanh", "expm1", "log", "log1p", "sin", "cos", "sinh", "cosh",
           "asin", "acos", "asinh", "acosh", "atanh", "erf", "erfc", "rsqrt", "atan_scalar")


def _million() -> np.ndarray:
    rng = np.random.default_rng(7)
    k = np.arange(1, 100_000)
    near = (k * np.pi / 2).astype(np.float32)
    parts = [rng.integers(0, 2 ** 32, 400_000, dtype=np.uint64).astype(np.uint32).view(
                 np.float32),
             rng.uniform(-10, 10, 200_000), rng.uniform(-1, 1, 100_000), near, -near,
             10.0 ** rng.uniform(-40, 38.5, 100_000) * rng.choice([-1.0, 1.0], 100_000),
             np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 2.0 ** -126])]
    with np.errstate(over="ignore", invalid="ignore"):
        return np.concatenate([np.asarray(p).astype(np.float32) for p in parts])


@needs_tier1
@pytest.mark.parametrize("name", KERNELS)
def test_native_bits_equal_numpy(name):
    x = _million()
    assert x.size >= 1_000_000
    native.evaluate(name, x)  # starts the compile
    engine.wait()
    got = fp_mode.run_flushing(native.evaluate, name, x)
    assert got is not None
    want = fp_mode.run_flushing(getattr(xla_math, f"_{name}_f32"), x)
    _assert_bits(got, want.view(np.uint32), x)


def _mixed_vectors(rng: np.random.Generator) -> np.ndarray:
    """Runs of 16 values (a kernel's vector steps, from the array's start) holding 0 to 16
    lanes of 120 and more among lanes below, some with small, inf or NaN lanes too: the
    kernels mend such vectors lane by lane or whole (tier1/xla_math.py's sincos)."""
    runs = []
    for large in range(17):
        for _ in range(8):
            run = rng.uniform(-119.9, 119.9, 16)
            at = rng.permutation(16)
            run[at[:large]] = rng.uniform(120, 3e4, large) * rng.choice([-1.0, 1.0], large)
            if rng.random() < 0.5:
                run[at[-1]] = rng.choice([1e-5, -3e-30, 0.0, np.inf, -np.inf, np.nan])
            runs.append(run)
    return np.concatenate(runs)


def _glibc_inputs() -> np.ndarray:
    """Arguments for sin and cos: vectors mixing the ranges, every float32 range, and the
    neighbours of multiples of pi/4 (where the quadrant changes) below 120 (glibc's fast
    reduction) and far above."""
    rng = np.random.default_rng(11)
    k = np.arange(1, 2000)
    turns = np.concatenate([k * np.pi / 4, rng.uniform(120, 1e6, 3000) // (np.pi / 4)
                            * (np.pi / 4)]).astype(np.float32)
    neighbours = [np.nextafter(turns, np.float32(s) * np.inf).astype(np.float32) for s in (1, -1)]
    parts = [_mixed_vectors(rng),
             rng.integers(0, 2 ** 32, 40_000, dtype=np.uint64).astype(np.uint32).view(
                 np.float32), rng.uniform(-130, 130, 30_000), turns, *neighbours,
             10.0 ** rng.uniform(-45, 38.5, 20_000), np.float32(3.4028235e38),
             np.array([0.0, np.inf, np.nan, 1e-40, 2.0 ** -126, 2.0 ** -12, 0.75, 120.0])]
    with np.errstate(over="ignore"):
        x = np.concatenate([np.asarray(p, np.float32).ravel() for p in parts])
    return np.concatenate([x, -x])


@needs_tier1
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_are_glibcs(name, monkeypatch):
    """The native kernels (the library's and a jit cluster's) give the C library's sinf/cosf
    bits (glibc's FMA build, what XLA calls), called through ctypes."""
    import ctypes.util

    import llvmlite.binding as llvm
    if not llvm.get_host_cpu_features().get("fma"):
        pytest.skip("glibc's sinf/cosf without FMA round differently (XLA's here, too)")
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    c_fn = getattr(libm, name + "f")
    c_fn.argtypes, c_fn.restype = [ctypes.c_float], ctypes.c_float
    x = _glibc_inputs()
    # (subnormals kept: ctypes converts through double, which flushing would zero)
    want = fp_mode.run_unflushed(lambda: np.array([c_fn(v) for v in x.tolist()], np.float32))
    native.evaluate(name, x)
    engine.wait()
    pyjax.clear_caches()
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)
    try:
        pyjax.config.update("jax_compile_sync", True)
        f = pyjax.jit(getattr(jnp, name))
        fused = np.asarray(f(x))
        assert any(isinstance(k, tier1.Kernel) for k in f.lower(x).compile()._run.kernels.values())
    finally:
        pyjax.config.update("jax_compile_sync", False)
        pyjax.clear_caches()
    nan = np.isnan(want)
    for got in (fp_mode.run_flushing(native.evaluate, name, x), fused):
        assert (np.isnan(got) == nan).all()
        _assert_bits(got[~nan], want[~nan].view(np.uint32), x[~nan])


# ---------------------------------------------------------------------------------------------
# erf, erfc, rsqrt, atan, pow, lgamma, digamma, asinh, acosh
# (tests/oracle/record_special_transcendentals.py)
# ---------------------------------------------------------------------------------------------

SPECIAL = np.load(os.path.join(os.path.dirname(__file__), "data", "special_transcendentals.npz"))
SPECIAL_NAMES = ("erf", "erfc", "rsqrt", "atan", "pow", "lgamma", "digamma", "asinh", "acosh")
#: left to tier 0 by tier 1
TIER0_ONLY = ("atan", "lgamma", "digamma")
_SPECIAL_FN = {"erf": pyjax.lax.erf, "erfc": pyjax.lax.erfc, "rsqrt": pyjax.lax.rsqrt,
               "atan": jnp.arctan, "pow": lambda x: jnp.power(x, x.dtype.type(1.7)),
               "lgamma": pyjax.lax.lgamma, "digamma": pyjax.lax.digamma,
               "asinh": jnp.arcsinh, "acosh": jnp.arccosh}


def _special(name: str, dtype: str = "") -> tuple[np.ndarray, np.ndarray]:
    key = f"{name}/{dtype + '/' if dtype else ''}"
    view = {"": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}[dtype]
    return SPECIAL[key + "x"].view(view), SPECIAL[key + "y"]


def _same_estimates(name: str) -> None:
    """Skip rsqrt where this processor's rsqrtss differs from the recording one's (XLA's
    rsqrt refines that estimate: JAX's results differ between processor makers too)."""
    if name != "rsqrt":
        return
    x = SPECIAL["rsqrt/estimate/x"].view(np.float32)
    mine = xla_math._rsqrt_estimate(x)
    if mine is None or (mine.view(np.uint32) != SPECIAL["rsqrt/estimate/y"]).any():
        pytest.skip("this processor's rsqrtss estimates differ from the recording one's")


def _nan_signs_cleared(name: str, got: Any, want: np.ndarray, x: np.ndarray) -> tuple:
    """erfc of a NaN is the NaN with its sign cleared or kept, by its lane in JAX (XLA's
    vector code orders the operands of its steps differently): compare magnitudes there."""
    got = np.array(got)
    if name != "erfc":
        return got, want
    nan = np.isnan(np.asarray(x, np.float32))
    bits, want = got.view(want.dtype), want.copy()
    sign = want.dtype.type(1 << (8 * want.itemsize - 1))
    bits[nan] &= ~sign
    want[nan] &= ~sign
    return got, want


@pytest.mark.parametrize("name", SPECIAL_NAMES)
def test_special_eager_float32(name):
    _same_estimates(name)
    x, want = _special(name)
    fn = _SPECIAL_FN[name]
    _assert_bits(*_nan_signs_cleared(name, fn(x), want, x), x)  # NumPy's, or the kernel's
    engine.wait()
    _assert_bits(*_nan_signs_cleared(name, fn(x), want, x), x)


@pytest.mark.parametrize("native_kernel", [False, True], ids=["tier0", "tier1"])
@pytest.mark.parametrize("name", SPECIAL_NAMES)
def test_special_jit_float32(name, native_kernel, monkeypatch):
    """Under jit; atan (whose code depends on the array's shape), lgamma and digamma stay in
    tier 0."""
    if native_kernel and tier1.reason() is not None:
        pytest.skip(f"tier 1 does not run here: {tier1.reason()}")
    _same_estimates(name)
    x, want = _special(name)
    pyjax.clear_caches()
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)
    monkeypatch.setattr(tier1, "ENABLED", native_kernel)
    try:
        pyjax.config.update("jax_compile_sync", True)
        f = pyjax.jit(_SPECIAL_FN[name])
        got = f(x)
        kernels = f.lower(x).compile()._run.kernels.values()
        expect = native_kernel and name not in TIER0_ONLY
        assert any(isinstance(k, tier1.Kernel) for k in kernels) == expect
    finally:
        pyjax.config.update("jax_compile_sync", False)
        pyjax.clear_caches()
    _assert_bits(*_nan_signs_cleared(name, got, want, x), x)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", SPECIAL_NAMES)
def test_special_eager_half(name, dtype):
    _same_estimates(name)
    x, want = _special(name, dtype)
    _assert_bits(*_nan_signs_cleared(name, _SPECIAL_FN[name](x), want, x), x)


@pytest.mark.parametrize("native_kernel", [None, False, True], ids=["eager", "tier0", "tier1"])
def test_pow_of_pairs(native_kernel, monkeypatch):
    """x ** y elementwise: glibc's powf, as XLA calls it (tier 1 too, not libmvec's)."""
    if native_kernel and tier1.reason() is not None:
        pytest.skip(f"tier 1 does not run here: {tier1.reason()}")
    x, y = SPECIAL["pow2/x"].view(np.float32), SPECIAL["pow2/y"].view(np.float32)
    if native_kernel is None:
        got = jnp.power(x, y)
    else:
        pyjax.clear_caches()
        monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)
        monkeypatch.setattr(tier1, "ENABLED", native_kernel)
        try:
            pyjax.config.update("jax_compile_sync", True)
            got = pyjax.jit(jnp.power)(x, y)
        finally:
            pyjax.config.update("jax_compile_sync", False)
            pyjax.clear_caches()
    _assert_bits(got, SPECIAL["pow2/z"], x)


def _shape_input(shape: tuple) -> np.ndarray:
    """record_special_transcendentals.shape_input: values in [-3, 3) from integer arithmetic."""
    i = np.arange(int(np.prod(shape)), dtype=np.uint64)
    bits = (i * np.uint64(2654435761) + np.uint64(12345)) % np.uint64(1 << 32)
    return (bits.astype(np.float64) / 2.0 ** 32 * 6 - 3).astype(np.float32).reshape(shape)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_atan_by_shape(jit, monkeypatch):
    """JAX's float32 atan is glibc's atanf on the lanes LLVM vectorises and XLA's own rational
    function in scalar loops: which ones depends on the array's shape (and, past 2^16
    elements, on the threads XLA splits the loop over: the recording machine's here)."""
    monkeypatch.setattr(xla_math, "_threads", lambda: int(SPECIAL["atan/threads"]))
    fn = pyjax.jit(jnp.arctan) if jit else jnp.arctan
    i = 0
    while f"atan/shapes/{i}/y" in SPECIAL:
        shape = tuple(int(n) for n in SPECIAL[f"atan/shapes/{i}/shape"])
        x = _shape_input(shape)
        got = np.asarray(fn(x))
        assert got.shape == shape
        _assert_bits(got.ravel(), SPECIAL[f"atan/shapes/{i}/y"].ravel(), x.ravel())
        i += 1
    assert i >= 20


def _shared_root(a, b):
    root = jnp.sqrt(b)
    return a / root + root


@pytest.mark.parametrize("native_kernel", [False, True], ids=["tier0", "tier1"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_division_by_a_root_under_jit(dtype, native_kernel, monkeypatch):
    """jit computes a / sqrt(b) as a * rsqrt(b) and a / rsqrt(b) as a * sqrt(b), as XLA's
    simplifier does where nothing else reads the root (two jnp.sqrt(b) are two roots; not for
    bfloat16, whose division XLA has widened to float32 by then)."""
    if native_kernel and tier1.reason() is not None:
        pytest.skip(f"tier 1 does not run here: {tier1.reason()}")
    _same_estimates("rsqrt")
    view = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16}[dtype]
    a = SPECIAL[f"div_root/{dtype}/a"].view(view)
    b = SPECIAL[f"div_root/{dtype}/b"].view(view)
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)
    monkeypatch.setattr(tier1, "ENABLED", native_kernel)
    for kind, fn in (("sqrt", lambda a, b: a / jnp.sqrt(b)),
                     ("rsqrt", lambda a, b: a / pyjax.lax.rsqrt(b)),
                     ("both", lambda a, b: a / jnp.sqrt(b) + jnp.sqrt(b)),
                     ("shared", _shared_root)):
        pyjax.clear_caches()
        try:
            pyjax.config.update("jax_compile_sync", True)
            got = np.asarray(pyjax.jit(fn)(a, b))
        finally:
            pyjax.config.update("jax_compile_sync", False)
            pyjax.clear_caches()
        want = SPECIAL[f"div_root/{dtype}/{kind}"]
        nan = np.isnan(got.astype(np.float32))  # (NaN payloads aside)
        assert (nan == np.isnan(want.view(view).astype(np.float32))).all(), kind
        _assert_bits(got[~nan], want[~nan], a[~nan])


@pytest.mark.parametrize("native_kernel", [False, True], ids=["tier0", "tier1"])
def test_bfloat16_division_by_a_constant_under_jit(native_kernel, monkeypatch):
    """jit computes bfloat16 x / c as XLA does: x * (1/c) in float32 (its bfloat16 arithmetic
    is widened before it simplifies), rounded to bfloat16 once."""
    if native_kernel and tier1.reason() is not None:
        pytest.skip(f"tier 1 does not run here: {tier1.reason()}")
    x = SPECIAL["div_const/x"].view(ml_dtypes.bfloat16)
    monkeypatch.setattr(tier0, "BLOCKWISE_MIN", 1)
    monkeypatch.setattr(tier1, "ENABLED", native_kernel)
    for c in (3.0, 7.0, 0.1, 1e-3, 10.0, 0.7):
        pyjax.clear_caches()
        try:
            pyjax.config.update("jax_compile_sync", True)
            got = pyjax.jit(lambda a, c=c: a / c)(x)
        finally:
            pyjax.config.update("jax_compile_sync", False)
            pyjax.clear_caches()
        _assert_bits(got, SPECIAL[f"div_const/{c!r}"], x)
