"""pyjax.image against JAX 0.10.2 (tests/data/image.json, recorded by
tests/oracle/record_image.py) and against float64 NumPy references.

(1) recorded: make_jaxpr texts and errors byte for byte (x64 off and on) and eager values with
    dtypes and weak types, float32 to 8 ulps of the result's scale (the weights are sums and
    quotients of transcendental kernels; XLA's sin differs from NumPy's by an ulp), float64 to
    1e-12, float16/bfloat16 to 2 ulps;
(2) float64 references: the triangle, Keys-cubic and Lanczos kernels written out per output
    pixel, TensorFlow's area rule, nearest neighbour by index;
(3) derivatives against finite differences (order 2, image, scale and translation) and vmap
    against a loop.
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import image
from pyjax.test_util import check_grads

import recorded
from op_table import x64_mode

import record_image  # noqa: E402  (tests/oracle is on the path via recorded)

DATA = recorded.load("image.json")
RECORDS = recorded.by_name(DATA["records"])


def _cases(x64: bool) -> dict[str, tuple]:
    with x64_mode(x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {n: (f, a, t) for n, f, a, t in record_image.cases(pyjax, jnp, pyjax.lax, np)}


CASES = {False: _cases(False), True: _cases(True)}

#: recorded outputs pyjax does not reproduce, for reasons outside jax.image (strict xfails)
_LIST_DTYPE = ("promote_dtypes_inexact of a Python list: JAX raises 'Cannot determine dtype "
               "of [1.5]', pyjax's dtype lookup 'unhashable type: list'")
_CONST_CONVERT = ("pyjax folds convert_element_type of a NumPy constant while staging; JAX "
                  "stages the convert")
_CONST_ORDER = ("closed-over constants: pyjax orders constvars by first use in an equation, "
                "JAX by first conversion (the image's no-op dtype promotion comes first)")
KNOWN_JAXPR_DIFFERENCES: dict[tuple[str, bool], str] = {
    **{(n, x64): _LIST_DTYPE for n in ("st_neg_axis", "st_python_scalars", "st_no_dims",
                                       "st_align_corners") for x64 in (False, True)},
    ("st_int_scale", False): _CONST_CONVERT, ("st_int_scale", True): _CONST_CONVERT,
    ("st_f64_scale", True): _CONST_CONVERT,
    ("st_vmap_scale", False): _CONST_ORDER, ("st_vmap_scale", True): _CONST_ORDER,
}
KNOWN_VALUE_DIFFERENCES: dict[tuple[str, bool], str] = {
    (n, x64): _LIST_DTYPE for n in ("st_neg_axis", "st_python_scalars", "st_no_dims",
                                    "st_align_corners") for x64 in (False, True)}


def _params(kind: str) -> list[Any]:
    out = []
    for (name, x64), rec in RECORDS.items():
        if kind == "jaxpr" and not ("jaxpr" in rec or "error" in rec):
            continue
        known = KNOWN_JAXPR_DIFFERENCES if kind == "jaxpr" else KNOWN_VALUE_DIFFERENCES
        why = known.get((name, x64))
        out.append(pytest.param(name, x64, id=f"{name}-{'x64' if x64 else 'x32'}",
                                marks=[pytest.mark.xfail(reason=why, strict=True)] if why
                                else []))
    return out


def _check_error(fn: Any, args: tuple, want: dict) -> None:
    with pytest.raises(Exception) as info:
        fn(*args)
    assert type(info.value).__name__ == want["type"]
    got, expected = str(info.value), want["message"]
    if "Tracer(" in expected:  # tracer reprs differ (JitTracer vs pyjax's)
        got, expected = got.split("got (")[0], expected.split("got (")[0]
    assert got == expected


@pytest.mark.parametrize("name,x64", _params("jaxpr"))
def test_jaxpr_matches_jax(name: str, x64: bool) -> None:
    record = RECORDS[(name, x64)]
    fn, args, _ = CASES[x64][name]
    with x64_mode(x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "error" in record:
            _check_error(pyjax.make_jaxpr(fn), args, record["error"])
        else:
            got = str(pyjax.make_jaxpr(fn)(*args))
            assert got == record["jaxpr"], f"\n--- pyjax\n{got}\n--- JAX\n{record['jaxpr']}"


_F32 = (8, np.finfo(np.float32).eps)
_ULPS = {"float32": _F32, "complex64": _F32, "float16": (2, np.finfo(np.float16).eps),
         "bfloat16": (2, 2.0 ** -7), "float64": (1, 1e-12), "complex128": (1, 1e-12)}
#: cases whose weights are float32 (the float32 scale and translation) whatever the image
_F32_WEIGHTS = {*(f"st_{m}_{aa}" for m in record_image.METHODS for aa in ("aa", "noaa")),
                *(f"st_grad_{m}" for m in record_image.METHODS), "st_grad_jaxpr", "st_rgb",
                "st_vmap_scale"}
#: derivatives with respect to the scale sum many products of kernel slopes, which cancel:
#: their float32 results hold to 128 ulps of their largest magnitude
_F32_SCALE_GRADS = (128, np.finfo(np.float32).eps)


def _close(got: Any, want: Any, name: str) -> None:
    if not isinstance(want, (dict, list)):
        assert got == want
        return
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, name)
        return
    assert (got["dtype"], got["weak_type"], got["shape"]) == (
        want["dtype"], want["weak_type"], want["shape"])
    g, w = np.array(got["values"], np.float64), np.array(want["values"], np.float64)
    if want["dtype"] not in _ULPS:
        np.testing.assert_array_equal(g, w)
        return
    ulps, eps = _ULPS[want["dtype"]]
    if name in _F32_WEIGHTS:
        ulps, eps = _F32_SCALE_GRADS if name.startswith("st_grad") else _F32
    scale = max(1.0, float(np.max(np.abs(w), initial=0.0)))
    np.testing.assert_allclose(g, w, rtol=0, atol=ulps * eps * scale)


@pytest.mark.parametrize("name,x64", _params("value"))
def test_eager_value_matches_jax(name: str, x64: bool) -> None:
    record = RECORDS[(name, x64)]
    fn, args, _ = CASES[x64][name]
    with x64_mode(x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "eager_error" in record:
            _check_error(fn, args, record["eager_error"])
        else:
            _close(record_image.value_of(fn(*args), np), record["value"], name)


# ---------------------------------------------------------------------------------------------
# (2) float64 references
# ---------------------------------------------------------------------------------------------

def _keys(x: float, a: float = -0.5) -> float:
    if x < 1:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a if x < 2 else 0.0


def _lanczos(r: int) -> Any:
    return lambda x: 1.0 if x <= 1e-3 else (
        0.0 if x > r else r * math.sin(math.pi * x) * math.sin(math.pi * x / r)
        / (math.pi * x) ** 2)


_KERNELS = {"linear": (lambda x: max(0.0, 1 - x)), "cubic": _keys,
            "lanczos3": _lanczos(3), "lanczos5": _lanczos(5)}


def _reference_1d(v: np.ndarray, n: int, method: str, antialias: bool,
                  scale: float | None = None, shift: float = 0.0) -> np.ndarray:
    """Resample a vector to n samples: weights of kernel(|centre - j| / kscale), normalised."""
    m = len(v)
    scale = n / m if scale is None else scale
    kscale = max(1 / scale, 1.0) if antialias else 1.0
    out = np.zeros(n)
    for i in range(n):
        c = (i + 0.5 - shift) / scale - 0.5
        if method == "area":
            lo = (i - shift) / scale
            w = np.array([max(0.0, min(lo + 1 / scale, j + 1) - max(lo, j)) for j in range(m)])
        else:
            w = np.array([_KERNELS[method](abs(c - j) / kscale) for j in range(m)])
        total = w.sum()
        if abs(total) > 1000 * np.finfo(np.float32).eps and -0.5 <= c <= m - 0.5:
            out[i] = w @ v / total
    return out


@pytest.mark.parametrize("method", [*_KERNELS, "area"])
@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("sizes", [(7, 16), (16, 5), (9, 9), (5, 1)])
def test_resize_against_float64_reference(method: str, antialias: bool, sizes: tuple) -> None:
    m, n = sizes
    v = np.random.default_rng(m * n).normal(size=m)
    with x64_mode(True):
        got = image.resize(v, (n,), method, antialias)
    want = v if m == n else _reference_1d(v, n, method, antialias)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def test_resize_2d_is_separable() -> None:
    x = np.random.default_rng(1).normal(size=(5, 6))
    with x64_mode(True):
        got = np.asarray(image.resize(x, (8, 3), "lanczos3"))
    rows = np.stack([_reference_1d(r, 3, "lanczos3", True) for r in x])
    want = np.stack([_reference_1d(c, 8, "lanczos3", True) for c in rows.T], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos5", "area"])
def test_scale_and_translate_against_reference(method: str) -> None:
    v = np.random.default_rng(2).normal(size=8)
    with x64_mode(True):
        got = image.scale_and_translate(v, (11,), (0,), jnp.array([1.3]), jnp.array([0.7]),
                                        method)
    np.testing.assert_allclose(np.asarray(got), _reference_1d(v, 11, method, True, 1.3, 0.7),
                               rtol=1e-12, atol=1e-12)


def test_cubic_pytorch_without_antialias_repeats_edges() -> None:
    """OpenCV's a = -0.75 kernel over the edge-padded vector (PyTorch's bicubic)."""
    v = np.random.default_rng(3).normal(size=6)
    n = 13
    padded = np.concatenate([[v[0]] * 2, v, [v[-1]] * 2])
    want = np.zeros(n)
    for i in range(n):
        c = (i + 0.5) * 6 / n - 0.5
        w = np.array([_keys(abs(c - j), -0.75) for j in range(-2, 8)])
        want[i] = w @ padded / w.sum()
    with x64_mode(True):
        got = image.resize(v, (n,), "cubic-pytorch", antialias=False)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


def test_nearest_picks_floor_of_centre() -> None:
    x = np.arange(35, dtype=np.int32).reshape(5, 7)
    got = np.asarray(image.resize(x, (3, 12), "nearest"))
    rows = np.floor((np.arange(3) + 0.5) * 5 / 3).astype(int)
    cols = np.floor((np.arange(12) + 0.5) * 7 / 12).astype(int)
    np.testing.assert_array_equal(got, x[rows][:, cols])
    assert got.dtype == x.dtype


def test_resize_method_enum() -> None:
    assert [m.name for m in image.ResizeMethod] == [
        "NEAREST", "LINEAR", "LANCZOS3", "LANCZOS5", "CUBIC", "CUBIC_PYTORCH", "AREA"]
    assert image.ResizeMethod.from_string("trilinear") is image.ResizeMethod.LINEAR
    with pytest.raises(ValueError, match='Unknown resize method "x"'):
        image.ResizeMethod.from_string("x")


# ---------------------------------------------------------------------------------------------
# (3) transformations
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["linear", "cubic", "cubic-pytorch", "lanczos3", "area"])
def test_resize_grads_numerically(method: str) -> None:
    x = np.random.default_rng(5).normal(size=(4, 5))
    with x64_mode(True):
        check_grads(lambda a: image.resize(a, (3, 7), method), (x,), order=2)


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "area"])
def test_scale_and_translate_grads_numerically(method: str) -> None:
    x = np.random.default_rng(6).normal(size=(4, 5))
    s, t = np.array([1.37, 0.83]), np.array([0.21, -0.34])
    with x64_mode(True):
        check_grads(lambda a, b, c: image.scale_and_translate(a, (6, 4), (0, 1), b, c, method),
                    (x, s, t), order=2, modes=["rev"])


def test_vmap_and_jit_equal_loop() -> None:
    x = np.random.default_rng(7).normal(size=(3, 4, 5)).astype(np.float32)
    f = lambda a: image.resize(a, (6, 2), "lanczos5")  # noqa: E731
    want = np.stack([np.asarray(f(a)) for a in x])
    np.testing.assert_allclose(np.asarray(pyjax.vmap(f)(x)), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(pyjax.jit(f)(x[0])), want[0], rtol=1e-6, atol=1e-6)
