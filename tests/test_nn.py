"""pyjax.nn against JAX 0.10.2 (tests/data/nn.json, recorded by tests/oracle/record_nn.py) and
against NumPy/SciPy in float64.

(1) recorded: make_jaxpr texts and errors byte for byte (x64 off and on); eager values, dtypes
    and weak types over grids reaching the tails (+-1e30, +-inf, NaN, signed zeros), with
    derivatives at kinks (relu'(0) = 0, relu6'(6) = 0) and away from them;
(2) the block quantizer of scaled_dot_general bit for bit;
(3) float64 references (SciPy's softmax, log_softmax, logsumexp; closed forms; a loop-based
    attention; the block-scaled matmul formula);
(4) derivatives against finite differences (order 2) and vmap against a Python loop.

Tolerances for recorded float32 values: 8 ulps or 4e-6 absolute (results are O(1); XLA's exp,
log, tanh and erf differ from NumPy's by an ulp or two, and XLA's float32 tanh saturates to 1
for |x| > 7.9 where NumPy's rounds correctly); float64: 1e-13; bfloat16/float16: 2 ulps.
Attention computes its softmax in float32 whatever the input type (as JAX), so its float64
results hold to float32 tolerance.
"""
from __future__ import annotations

import json
import os
import sys
import warnings
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import scipy.special as sps

import pyjax
import pyjax.nn as nn
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.test_util import check_grads

from op_table import x64_mode

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "oracle"))
import record_nn  # noqa: E402

with open(os.path.join(HERE, "data", "nn.json")) as _f:
    DATA = json.load(_f)


def _cases(x64: bool) -> dict[str, tuple]:
    with x64_mode(x64), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {n: (f, a) for n, f, a, _ in record_nn.nn_cases(pyjax, jnp, lax, np)}


CASES = {False: _cases(False), True: _cases(True)}

#: recorded jaxprs pyjax does not reproduce, for reasons outside jax.nn
_CUSTOM_VJP_CONSTS = ("pyjax's custom_vjp keeps closed-over constants (the NVFP4 global scale) "
                      "inside call_jaxpr; JAX passes them as operands (num_consts=1)")
KNOWN_JAXPR_DIFFERENCES = {
    ("scaled_dot_general_nvfp4", False): _CUSTOM_VJP_CONSTS,
    ("scaled_dot_general_nvfp4", True): _CUSTOM_VJP_CONSTS,
    ("scaled_dot_general_nvfp4_global", False): _CUSTOM_VJP_CONSTS,
    ("scaled_dot_general_nvfp4_global", True): _CUSTOM_VJP_CONSTS,
    ("dpa_grad", False): "a dead reduce_sum of the linearized softmax prints axes=(4,) where "
                         "JAX keeps the batched axes=(np.int64(4),) (ad/batching)",
    ("dpa_grad", True): "a dead reduce_sum of the linearized softmax prints axes=(4,) where "
                        "JAX keeps the batched axes=(np.int64(4),) (ad/batching)",
}
_JIT_PARTIAL_EVAL = ("grad through a jitted function: JAX linearizes a jit call directly "
                     "(pjit's linearize rule), and a nested jit keeps constant-zero tangents "
                     "as residuals and unused residual inputs; pyjax splits it by partial "
                     "evaluation and drops them (transforms/jit.py)")
_CONST_CONVERT = ("pyjax folds convert_element_type of a NumPy constant (np.arange(5) * f32) "
                  "while staging; JAX stages the convert")
_WHERE_MAX_JVP = ("the derivative of jnp.max(where=) / jnp.where stages jit[_where] calls "
                  "JAX does not (jnp reductions under AD)")
for _name, _why in [*[(f"{n}_grad_jaxpr", _JIT_PARTIAL_EVAL) for n in (
        "elu", "hard_tanh", "identity", "selu", "sparse_plus")],
        ("log_softmax_grad", _JIT_PARTIAL_EVAL),
        ("logmeanexp_grad", _JIT_PARTIAL_EVAL), ("standardize_grad", _CONST_CONVERT),
        ("softmax_grad", _CONST_CONVERT), ("log_softmax_grad_where", _WHERE_MAX_JVP)]:
    for _x64 in (False, True):
        KNOWN_JAXPR_DIFFERENCES[_name, _x64] = _why

#: recorded values pyjax does not compare, with the reason
NO_RECORDED_VALUE = {
    "standardize_fast_big": "mean(x^2) - mean(x)^2 of numbers near 1e4 in float32 cancels "
                            "catastrophically: the result is the summation order's rounding "
                            "(JAX documents it differs between eager and jit)",
}
#: JAX 0.10.2 lowers scaled_matmul for CUDA and ROCm only: on CPU it raises where pyjax
#: computes the block-scaled product (checked against NumPy in test_scaled_matmul_*)
NO_CPU_LOWERING = "MLIR translation rule for primitive 'scaled_matmul' not found for platform cpu"


def _records(kind: str) -> list[Any]:
    out = []
    for r in DATA["records"]:
        if kind == "jaxpr" and not ("jaxpr" in r or "error" in r):
            continue
        key = (r["name"], r["x64"])
        marks = []
        if kind == "jaxpr" and key in KNOWN_JAXPR_DIFFERENCES:
            marks = [pytest.mark.xfail(reason=KNOWN_JAXPR_DIFFERENCES[key], strict=True)]
        out.append(pytest.param(r, id=f"{r['name']}-{'x64' if r['x64'] else 'x32'}",
                                marks=marks))
    return out


def _same_error(e: BaseException, want: dict) -> None:
    assert type(e).__name__ == want["type"], (type(e).__name__, str(e))
    got, expected = str(e), want["message"]
    if want["type"] == "ConcretizationTypeError":  # source paths and lines differ
        got, expected = got.splitlines()[:1], expected.splitlines()[:1]
    assert got == expected


@pytest.mark.parametrize("rec", _records("jaxpr"))
def test_jaxprs_and_errors_match_jax(rec: dict) -> None:
    fn, args = CASES[rec["x64"]][rec["name"]]
    with x64_mode(rec["x64"]), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        if "error" in rec:
            with pytest.raises(Exception) as info:
                pyjax.make_jaxpr(fn)(*args)
            _same_error(info.value, rec["error"])
        else:
            got = str(pyjax.make_jaxpr(fn)(*args))
            assert got == rec["jaxpr"], f"\n--- pyjax\n{got}\n--- JAX\n{rec['jaxpr']}"


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    def ordinal(x: np.ndarray) -> np.ndarray:
        i = x.view(f"i{x.dtype.itemsize}").astype(np.int64)
        return np.where(i < 0, -(i & ((1 << (8 * x.dtype.itemsize - 1)) - 1)), i)
    return np.abs(ordinal(got) - ordinal(want)).astype(np.float64)


def _check_value(name: str, x64: bool, got: Any, want: dict) -> None:
    arr = np.asarray(got)
    assert str(arr.dtype) == want["dtype"]
    assert list(arr.shape) == want["shape"]
    assert bool(getattr(got, "weak_type", False)) == want["weak_type"]
    if name in NO_RECORDED_VALUE:
        return
    if arr.dtype.kind == "c":
        expected = np.array(want["values"], np.float64)
        np.testing.assert_allclose(np.stack([arr.real, arr.imag], -1), expected, rtol=2e-6)
        return
    expected = np.array(want["values"], np.float64).reshape(arr.shape).astype(arr.dtype)
    if arr.dtype.kind in "biu":
        np.testing.assert_array_equal(arr, expected)
        return
    f32_level = arr.dtype == np.float32 or (name.startswith("dpa") and arr.dtype == np.float64)
    if f32_level:
        max_ulps, atol = (8, 4e-6) if arr.dtype == np.float32 else (8 << 29, 4e-6)
    elif arr.dtype == np.float64:
        max_ulps, atol = 64, 1e-13
    else:  # bfloat16, float16
        max_ulps, atol = 2, 0.0
    if name == "standardize_stable":  # the mean of numbers near 1e4 is rounded at 1e4 * eps
        atol = 1e-10 if x64 else 2e-3
    g, w = arr.astype(np.float64), expected.astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    with np.errstate(invalid="ignore"):
        close = (g == w) | both_nan | (np.abs(g - w) <= atol) | (_ulps(arr, expected) <= max_ulps)
    close &= np.isnan(g) == np.isnan(w)
    assert close.all(), (f"{name}: {int((~close).sum())} of {close.size} differ, e.g. pyjax "
                         f"{g[~close][:3]} JAX {w[~close][:3]}")


@pytest.mark.parametrize("rec", _records("value"))
def test_values_match_jax(rec: dict) -> None:
    fn, args = CASES[rec["x64"]][rec["name"]]
    with x64_mode(rec["x64"]), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        if "value_error" in rec and rec["value_error"]["message"] != NO_CPU_LOWERING:
            with pytest.raises(Exception) as info:
                fn(*args)
            _same_error(info.value, rec["value_error"])
            return
        got = fn(*args)
    if "value" in rec:
        want = rec["value"]
        for g, w in (zip(got, want) if isinstance(want, list) else [(got, want)]):
            _check_value(rec["name"], rec["x64"], g, w)


def test_recording_covers_every_case() -> None:
    recorded = {(r["name"], r["x64"]) for r in DATA["records"]}
    assert recorded == {(n, x) for x in (False, True) for n in CASES[x]}


# ---------------------------------------------------------------------------------------------
# (2) the block quantizer, bit for bit
# ---------------------------------------------------------------------------------------------

def _bits(arr: Any) -> list[str]:
    arr = np.asarray(arr)
    return [format(int(b), "x") for b in arr.reshape(-1).view(f"u{arr.dtype.itemsize}")]


_ZERO_BLOCK = {
    "nvfp4": "a block of zeros divides 0 / 0: XLA converts that NaN to float4_e2m1fn as 0x8 "
             "(-0), ml_dtypes (pyjax's conversion) as 0"}


def _quantize_records() -> list[Any]:
    out = []
    for r in DATA["quantize"]:
        marks = []
        if r["name"].endswith("zeros_and_powers") and r["name"][:5] in _ZERO_BLOCK:
            marks = [pytest.mark.xfail(reason=_ZERO_BLOCK[r["name"][:5]], strict=True)]
        out.append(pytest.param(r, id=r["name"], marks=marks))
    return out


@pytest.mark.parametrize("rec", _quantize_records())
def test_quantize_matches_jax_bits(rec: dict) -> None:
    cases = {n: (x, c) for n, x, c in record_nn.quantize_cases(pyjax, jnp, np)}
    x, config = cases[rec["name"]]
    q, s = record_nn.quantize_fn(pyjax)(jnp.asarray(x), config)
    assert (str(q.dtype), str(s.dtype)) == (rec["q_dtype"], rec["s_dtype"])
    assert _bits(q) == rec["q"]
    assert _bits(s) == rec["s"]


# ---------------------------------------------------------------------------------------------
# (3) float64 references
# ---------------------------------------------------------------------------------------------

X = np.array([-30.0, -7.0, -2.5, -1.0, -0.3, 0.0, 0.2, 0.9, 1.7, 4.0, 6.5, 25.0])
CLOSED_FORMS = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "sigmoid": sps.expit,
    "log_sigmoid": sps.log_expit,
    "softplus": lambda x: np.logaddexp(x, 0),
    "silu": lambda x: x * sps.expit(x),
    "mish": lambda x: x * np.tanh(np.logaddexp(x, 0)),
    "elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "selu": lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
    "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: np.clip(x + 1, 0, 2) / 2,
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))),
    "identity": lambda x: x,
    "tanh": np.tanh,
}


@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
def test_activation_float64_closed_forms(x64: Any, name: str) -> None:
    got = getattr(nn, name)(X)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, CLOSED_FORMS[name](X), rtol=1e-14, atol=1e-300)


def test_gelu_exact_and_log1mexp_float64(x64: Any) -> None:
    np.testing.assert_allclose(nn.gelu(X, approximate=False), X * sps.ndtr(X), rtol=1e-14,
                               atol=1e-300)
    x = np.array([1e-20, 1e-5, 0.3, 0.69, 0.7, 3.0, 40.0, 800.0])
    want = np.where(x < np.log(2), np.log(-np.expm1(-x)), np.log1p(-np.exp(-x)))
    np.testing.assert_allclose(nn.log1mexp(x), want, rtol=1e-14)
    np.testing.assert_array_equal(nn.log1mexp(np.array([0.0, np.inf])), [-np.inf, 0.0])


def test_softmax_family_float64_against_scipy(x64: Any) -> None:
    x = np.random.default_rng(0).normal(0, 20, size=(4, 6))
    for axis in (-1, 0, None, (0, 1)):
        np.testing.assert_allclose(nn.softmax(x, axis=axis), sps.softmax(x, axis=axis),
                                   rtol=1e-13, atol=1e-300)
        np.testing.assert_allclose(nn.log_softmax(x, axis=axis), sps.log_softmax(x, axis=axis),
                                   rtol=1e-13)
        np.testing.assert_allclose(nn.logsumexp(x, axis=axis), sps.logsumexp(x, axis=axis),
                                   rtol=1e-14)
    mask = x > 0
    with np.errstate(divide="ignore", invalid="ignore"):  # a row with nothing selected
        want = np.where(mask, np.exp(x) / np.where(mask, np.exp(x), 0).sum(1, keepdims=True), 0)
    np.testing.assert_allclose(nn.softmax(x, where=mask), want, rtol=1e-13)


def test_logsumexp_b_and_sign_against_scipy(x64: Any) -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 5, size=(3, 7)), rng.normal(size=(3, 7))
    for axis in (None, 0, 1):
        out, sign = nn.logsumexp(a, axis=axis, b=b, return_sign=True)
        want, want_sign = sps.logsumexp(a, axis=axis, b=b, return_sign=True)
        np.testing.assert_allclose(out, want, rtol=1e-13)
        np.testing.assert_array_equal(sign, want_sign)
    with np.errstate(invalid="ignore"):
        want = sps.logsumexp(a, axis=1, b=b)
    np.testing.assert_allclose(nn.logsumexp(a, axis=1, b=b), want, rtol=1e-13)  # NaN if < 0
    np.testing.assert_allclose(nn.logmeanexp(a, axis=1),
                               sps.logsumexp(a, axis=1) - np.log(7), rtol=1e-14)


def test_standardize_and_one_hot_against_numpy(x64: Any) -> None:
    x = np.random.default_rng(2).normal(3, 2, size=(4, 5))
    want = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(nn.standardize(x), want, rtol=1e-10)
    np.testing.assert_allclose(nn.standardize(x, algorithm="stable"), want, rtol=1e-13)
    idx = np.array([[0, 3], [-1, 2]])
    np.testing.assert_array_equal(nn.one_hot(idx, 3), np.eye(4)[np.where(idx < 0, 3, idx),
                                                                 :3])
    np.testing.assert_array_equal(nn.one_hot(idx, 3, axis=0),
                                  np.moveaxis(np.asarray(nn.one_hot(idx, 3)), -1, 0))


def test_one_hot_float_input_is_deprecated() -> None:
    with pytest.warns(DeprecationWarning, match="one_hot input should be integer-typed; "
                                                "got dtype=float32"):
        out = nn.one_hot(np.array([1.0, 0.0], np.float32), 2)
    np.testing.assert_array_equal(out, [[0, 1], [1, 0]])


def _attention_reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, bias: Any = None,
                         mask: Any = None, causal: bool = False, scale: Any = None,
                         window: Any = None) -> np.ndarray:
    """softmax(q k^T * scale + bias, masked) v, head by head, in float64."""
    B, T, N, H = q.shape
    S, K = k.shape[1], k.shape[2]
    scale = 1 / np.sqrt(H) if scale is None else scale
    out = np.zeros((B, T, N, H))
    for b in range(B):
        for n in range(N):
            kk, vv = k[b, :, n // (N // K)], v[b, :, n // (N // K)]
            logits = q[b, :, n] @ kk.T * scale
            if bias is not None:
                logits = logits + np.broadcast_to(bias, (B, N, T, S))[b, n]
            keep = np.ones((T, S), bool)
            if mask is not None:
                keep &= np.broadcast_to(mask, (B, N, T, S))[b, n]
            if causal:
                keep &= np.tril(np.ones((T, S), bool))
            if window is not None:
                t, s = np.arange(T)[:, None], np.arange(S)[None, :]
                keep &= (t <= s + window[0]) & (t >= s - window[1])
            logits = np.where(keep, logits, -1e300)
            out[b, :, n] = sps.softmax(logits, axis=-1) @ vv
    return out


def test_dot_product_attention_against_loop(x64: Any) -> None:
    rng = np.random.default_rng(3)
    q, k, v = (rng.normal(size=s) for s in ((2, 4, 4, 3), (2, 5, 2, 3), (2, 5, 2, 3)))
    bias = rng.normal(size=(1, 4, 4, 5))
    mask = rng.uniform(size=(2, 1, 4, 5)) < 0.7
    mask[..., 0] = True
    tol = dict(rtol=2e-6, atol=2e-6)  # the softmax runs in float32 (as JAX)
    np.testing.assert_allclose(nn.dot_product_attention(q, k, v),
                               _attention_reference(q, k, v), **tol)
    np.testing.assert_allclose(nn.dot_product_attention(q, k, v, bias, mask, scale=0.7),
                               _attention_reference(q, k, v, bias, mask, scale=0.7), **tol)
    np.testing.assert_allclose(nn.dot_product_attention(q, k, v, is_causal=True,
                                                        local_window_size=(1, 0)),
                               _attention_reference(q, k, v, causal=True, window=(1, 0)),
                               **tol)


def test_scaled_matmul_against_block_formula() -> None:
    """The docstring's definition: each operand times its scales repeated over blocks of K."""
    rng = np.random.default_rng(4)
    a = rng.normal(size=(2, 3, 64)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.normal(size=(2, 5, 64)).astype(ml_dtypes.float8_e4m3fn)
    sa = (2.0 ** rng.integers(-4, 4, size=(2, 3, 2))).astype(ml_dtypes.float8_e8m0fnu)
    sb = (2.0 ** rng.integers(-4, 4, size=(2, 5, 2))).astype(ml_dtypes.float8_e8m0fnu)
    wide = [t.astype(np.float64) for t in (a, b, sa, sb)]
    want = np.einsum("BMK,BNK->BMN", wide[0] * np.repeat(wide[2], 32, -1),
                     wide[1] * np.repeat(wide[3], 32, -1))
    got = nn.scaled_matmul(jnp.asarray(a), jnp.asarray(b), jnp.asarray(sa), jnp.asarray(sb))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert nn.scaled_matmul(jnp.asarray(a), jnp.asarray(b), jnp.asarray(sa), jnp.asarray(sb),
                            preferred_element_type=jnp.bfloat16).dtype == jnp.bfloat16
    batched = pyjax.vmap(nn.scaled_matmul)(*(jnp.asarray(np.stack([t, t])) for t in
                                             (a, b, sa, sb)))
    np.testing.assert_array_equal(batched, np.stack([got, got]))


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
def test_scaled_dot_general_is_the_dot_of_its_quantized_operands(mode: str) -> None:
    rng = np.random.default_rng(6)
    lhs = rng.normal(size=(2, 32, 64)).astype(np.float32)
    rhs = rng.normal(size=(2, 32, 64)).astype(np.float32)
    config = nn.get_scaled_dot_general_config(mode)
    quantize = record_nn.quantize_fn(pyjax)

    def dequantized(x: np.ndarray) -> np.ndarray:
        q, s = quantize(jnp.asarray(x), config)
        return np.asarray(q).astype(np.float64) * np.repeat(
            np.asarray(s).astype(np.float64), config.block_size, -1)

    dn = (((2,), (2,)), ((0,), (0,)))
    got = nn.scaled_dot_general(lhs, rhs, dn, configs=[config] * 3)
    want = np.einsum("BMK,BNK->BMN", dequantized(lhs), dequantized(rhs))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    # ... which approximates the exact product to the format's precision
    exact = np.einsum("BMK,BNK->BMN", lhs, rhs)
    assert np.abs(got - exact).max() < (2.0 if mode == "mxfp8" else 8.0)
    # its VJP: the cotangent products (quantized for MXFP8, plain for NVFP4)
    g_lhs, g_rhs = pyjax.grad(lambda l, r: nn.scaled_dot_general(
        l, r, dn, configs=[config] * 3).sum(), (0, 1))(lhs, rhs)
    np.testing.assert_allclose(g_lhs, np.broadcast_to(rhs.sum(1, keepdims=True), lhs.shape),
                               rtol=0.1, atol=0.5)
    np.testing.assert_allclose(g_rhs, np.broadcast_to(lhs.sum(1, keepdims=True), rhs.shape),
                               rtol=0.1, atol=0.5)


def test_scaled_dot_general_without_configs_is_dot_general() -> None:
    rng = np.random.default_rng(7)
    lhs, rhs = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))
    got = nn.scaled_dot_general(lhs, rhs, (((1,), (0,)), ((), ())))
    np.testing.assert_allclose(got, lhs @ rhs, rtol=1e-5)
    with pytest.warns(DeprecationWarning, match="Backend selector, now ignored"):
        nn.scaled_dot_general(lhs, rhs, (((1,), (0,)), ((), ())), implementation="cudnn")


# ---------------------------------------------------------------------------------------------
# (4) derivatives (finite differences, order 2) and vmap
# ---------------------------------------------------------------------------------------------

SMOOTH = np.array([-4.3, -2.2, -1.3, -0.45, 0.35, 1.4, 2.6, 5.2])
SMOOTH_ACTIVATIONS = ["celu", "elu", "gelu", "log_sigmoid", "mish", "selu", "sigmoid", "silu",
                      "soft_sign", "softplus", "squareplus", "tanh", "leaky_relu", "relu",
                      "relu6", "hard_tanh", "hard_sigmoid", "hard_silu", "sparse_plus",
                      "sparse_sigmoid", "identity"]


@pytest.mark.parametrize("name", SMOOTH_ACTIVATIONS)
def test_activation_grads(x64: Any, name: str) -> None:
    check_grads(getattr(nn, name), (SMOOTH,), order=2, modes=("fwd", "rev"))


def test_grads_of_parametrized_activations(x64: Any) -> None:
    check_grads(lambda x: nn.gelu(x, approximate=False), (SMOOTH,), order=2)
    check_grads(nn.log1mexp, (np.abs(SMOOTH) + 0.1,), order=2)
    check_grads(lambda x, a: nn.elu(x, a), (SMOOTH, 0.7), order=2)
    check_grads(lambda x, a: nn.celu(x, a), (SMOOTH, 1.3), order=2)
    check_grads(lambda x, b: nn.squareplus(x, b), (SMOOTH, 2.5), order=2)
    check_grads(nn.glu, (SMOOTH.reshape(2, 4),), order=2)


def test_kink_derivatives_are_jaxs_choices() -> None:
    at = np.array([0.0, 6.0, -3.0, 3.0], np.float32)
    np.testing.assert_array_equal(pyjax.vmap(pyjax.grad(nn.relu))(at), [0, 1, 0, 1])
    np.testing.assert_array_equal(pyjax.vmap(pyjax.grad(nn.relu6))(at), [0, 0, 0, 1])
    np.testing.assert_allclose(pyjax.vmap(pyjax.grad(nn.hard_sigmoid))(at), [1 / 6, 0, 0, 0],
                               rtol=1e-7)


def test_reduction_grads(x64: Any) -> None:
    rng = np.random.default_rng(8)
    x, b = rng.normal(size=(3, 4)), rng.uniform(0.5, 2, size=(3, 4))
    mask = np.array([[True, False, True, True]] * 3)
    check_grads(lambda x: nn.softmax(x, axis=1), (x,), order=2)
    check_grads(lambda x: nn.log_softmax(x, axis=0), (x,), order=2)
    check_grads(lambda x: jnp.where(mask, nn.softmax(x, where=mask), 0.0), (x,), order=2)
    check_grads(lambda x, b: nn.logsumexp(x, axis=1, b=b), (x, b), order=2)
    check_grads(lambda x: nn.logsumexp(x, axis=1, return_sign=True)[0], (x,), order=2)
    every_column = np.array([[True, False, True, True], [False, True, True, False],
                             [True, True, False, True]])
    check_grads(lambda x: nn.logmeanexp(x, axis=0, where=every_column), (x,), order=2)
    check_grads(lambda x: nn.standardize(x, algorithm="stable"), (x,), order=2)
    check_grads(nn.standardize, (x,), order=2)


def test_attention_grads(x64: Any) -> None:
    rng = np.random.default_rng(9)
    q, k, v = (rng.normal(size=s) for s in ((1, 3, 2, 2), (1, 4, 1, 2), (1, 4, 1, 2)))
    bias = rng.normal(size=(1, 2, 3, 4))
    check_grads(lambda q, k, v, b: nn.dot_product_attention(q, k, v, b, is_causal=True),
                (q, k, v, bias), order=2, atol=1e-4, rtol=1e-4, eps=1e-3)


VMAPPED = {
    "softmax": lambda x: nn.softmax(x),
    "log_softmax": lambda x: nn.log_softmax(x, axis=0),
    "logsumexp_b": lambda x: nn.logsumexp(x, b=x * x, return_sign=True),
    "logmeanexp": lambda x: nn.logmeanexp(x, where=x > 0),
    "standardize": lambda x: nn.standardize(x, axis=None),
    "one_hot": lambda x: nn.one_hot(jnp.argmax(x, axis=-1), 4, axis=0),
    "glu": lambda x: nn.glu(x, axis=0),
    "gelu": lambda x: nn.gelu(x, approximate=False),
    "relu_grad": pyjax.grad(lambda x: nn.relu(x).sum()),
}


@pytest.mark.parametrize("name", sorted(VMAPPED))
@pytest.mark.parametrize("in_axis", [0, 1])
def test_vmap_matches_loop(name: str, in_axis: int) -> None:
    x = np.random.default_rng(10).normal(size=(4, 2, 6)).astype(np.float32)
    f = VMAPPED[name]
    got = pyjax.vmap(f, in_axes=in_axis)(jnp.asarray(np.moveaxis(x, 0, in_axis)))
    outs = [f(x[i]) for i in range(x.shape[0])]
    want = pyjax.tree_util.tree_map(lambda *o: np.stack(o), *outs)
    pyjax.tree_util.tree_map(lambda g, w: np.testing.assert_allclose(g, w, rtol=1e-6,
                                                                     atol=1e-6), got, want)


def test_attention_vmap_matches_loop() -> None:
    rng = np.random.default_rng(11)
    q, k, v = (rng.normal(size=s).astype(np.float32)
               for s in ((3, 4, 2, 2), (3, 5, 2, 2), (3, 5, 2, 2)))
    lengths = np.array([2, 5, 3], np.int32)

    def f(q: Any, k: Any, v: Any, n: Any) -> Any:
        return nn.dot_product_attention(q[None], k[None], v[None], is_causal=True,
                                        key_value_seq_lengths=n[None])[0]
    got = pyjax.vmap(f)(q, k, v, lengths)
    want = np.stack([f(q[i], k[i], v[i], lengths[i]) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
