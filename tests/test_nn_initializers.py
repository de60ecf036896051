"""pyjax.nn.initializers and pyjax.random.{orthogonal, binomial, multinomial} against JAX 0.10.2:
values bit for bit (tests/data/nn_initializers.json, tests/oracle/record_nn_initializers.py),
jaxprs byte for byte, errors by class and text; plus the distributions' own properties."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax, random
from pyjax.nn import initializers as ini

from recorded import load
from op_table import x64_mode
import record_nn_initializers as rec

RECORDS = load("nn_initializers.json")["records"]


def _cases(kind: str) -> dict[tuple[str, bool], tuple]:
    """name, x64 -> (fn, args) of one of the recorder's case lists, built under pyjax."""
    cases_fn = {"value": rec.value_cases, "jaxpr": rec.jaxpr_cases, "error": rec.error_cases}[kind]
    out = {}
    for x64 in (False, True):
        with x64_mode(x64):
            for name, fn, args in cases_fn(pyjax, jnp, lax, np):
                out[name, x64] = fn, args
    return out


_BUILT = {kind: None for kind in ("value", "jaxpr", "error")}


def _case(kind: str, record: dict) -> tuple:
    if _BUILT[kind] is None:
        _BUILT[kind] = _cases(kind)
    return _BUILT[kind][record["name"], record["x64"]]


def _params(kind: str) -> list:
    return [pytest.param(r, id=f"{r['name']}-x64={r['x64']}") for r in RECORDS
            if r["kind"] == kind]


@pytest.mark.parametrize("record", _params("value"))
def test_value_matches_jax_bit_for_bit(record: dict) -> None:
    fn, args = _case("value", record)
    with x64_mode(record["x64"]):
        got = rec.encode(fn(*args), np)
    want = record["value"]
    assert (got["dtype"], got["shape"]) == (want["dtype"], want["shape"])
    if got["hex"] != want["hex"]:
        dtype = np.dtype(got["dtype"]) if got["dtype"] != "bfloat16" else np.uint16
        g, w = (np.frombuffer(bytes.fromhex(v["hex"]), dtype) for v in (got, want))
        bad = np.flatnonzero(g.view(np.uint8).reshape(g.size, -1) !=
                             w.view(np.uint8).reshape(w.size, -1))
        pytest.fail(f"{bad.size} bytes differ; pyjax {g[:8]} JAX {w[:8]}")


@pytest.mark.parametrize("record", _params("value"))
def test_value_close_to_jax(record: dict) -> None:
    """Every recorded value, the known differences included, agrees to float rounding."""
    fn, args = _case("value", record)
    with x64_mode(record["x64"]):
        got = np.asarray(fn(*args))
    want = record["value"]
    dtype = got.dtype
    expected = np.frombuffer(bytes.fromhex(want["hex"]), dtype).reshape(want["shape"])
    assert (dtype.name, list(got.shape)) == (want["dtype"], want["shape"])
    if dtype.kind not in "fcV":
        np.testing.assert_array_equal(got, expected)
        return
    g, w = (np.asarray(v, np.complex128 if dtype.kind == "c" else np.float64)
            for v in (got, expected))
    eps = float(jnp.finfo(dtype).eps)
    scale = np.abs(w[np.isfinite(w)]).max(initial=0.0)
    np.testing.assert_allclose(g, w, rtol=16 * eps, atol=8 * eps * scale)


@pytest.mark.parametrize("record", _params("jaxpr"))
def test_jaxpr_matches_jax(record: dict) -> None:
    fn, args = _case("jaxpr", record)
    with x64_mode(record["x64"]):
        got = str(pyjax.make_jaxpr(fn)(*args))
    assert got == record["jaxpr"], f"\n--- pyjax\n{got}\n--- JAX\n{record['jaxpr']}"


@pytest.mark.parametrize("record", _params("error"))
def test_error_matches_jax(record: dict) -> None:
    fn, args = _case("error", record)
    with x64_mode(record["x64"]), pytest.raises(Exception) as info:
        fn(*args)
    assert type(info.value).__name__ == record["error"]["type"]
    assert str(info.value) == record["error"]["message"]


# ---------------------------------------------------------------------------------------------
# Properties that hold whatever the key
# ---------------------------------------------------------------------------------------------

def test_the_module_exports_jax_names() -> None:
    expected = {"Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform",
                "he_normal", "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal",
                "lecun_uniform", "normal", "ones", "orthogonal", "truncated_normal", "uniform",
                "variance_scaling", "xavier_normal", "xavier_uniform", "zeros"}
    assert expected <= set(dir(ini))
    assert ini.xavier_uniform is ini.glorot_uniform and ini.kaiming_normal is ini.he_normal
    built = {"constant": ini.constant(1.),
             "variance_scaling": ini.variance_scaling(1., "fan_in", "normal")}
    for name in expected - {"Initializer", "zeros", "ones"}:
        init = built[name] if name in built else getattr(ini, name)()
        assert isinstance(init, ini.Initializer), name
    assert isinstance(ini.zeros, ini.Initializer)
    assert list(inspect.signature(ini.normal()).parameters) == [
        "key", "shape", "dtype", "out_sharding"]


@pytest.mark.parametrize("mode,fan", [("fan_in", 3 * 3 * 64), ("fan_out", 3 * 3 * 32),
                                      ("fan_avg", 3 * 3 * 48),
                                      ("fan_geo_avg", 3 * 3 * np.sqrt(64 * 32))])
@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "uniform"])
def test_variance_scaling_reaches_its_variance(mode: str, fan: float, distribution: str) -> None:
    """Conv kernel (HWIO): the receptive field multiplies both fans."""
    init = ini.variance_scaling(2.0, mode, distribution)
    w = np.asarray(init(random.key(1), (3, 3, 64, 32)), np.float64)
    assert w.shape == (3, 3, 64, 32) and w.dtype == np.float64 or w.dtype == np.float32
    np.testing.assert_allclose(w.var(), 2.0 / fan, rtol=0.05)
    assert abs(w.mean()) < 0.05 * np.sqrt(2.0 / fan)
    if distribution == "truncated_normal":
        assert np.abs(w).max() <= 2 * np.sqrt(2.0 / fan) / .87962566103423978
    if distribution == "uniform":
        assert np.abs(w).max() <= np.sqrt(3 * 2.0 / fan)


@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "uniform"])
def test_complex_variance_scaling(distribution: str) -> None:
    w = np.asarray(ini.variance_scaling(1.0, "fan_in", distribution)(
        random.key(2), (200, 100), jnp.complex64))
    assert w.dtype == np.complex64
    np.testing.assert_allclose(np.mean(np.abs(w) ** 2), 1 / 200, rtol=0.05)
    if distribution != "normal":  # moduli bounded: disk of radius sqrt(2 var), or 2 stddevs
        bound = np.sqrt(2 / 200) if distribution == "uniform" else 2 / np.sqrt(200) / .9531
        assert np.abs(w).max() <= bound * (1 + 1e-6)


@pytest.mark.parametrize("shape,column_axis", [((5, 5), -1), ((4, 7), -1), ((7, 4), -1),
                                               ((2, 3, 6), -1), ((6, 2, 3), 0)])
def test_orthogonal_is_orthogonal(shape: tuple, column_axis: int) -> None:
    w = np.asarray(ini.orthogonal(scale=1.5, column_axis=column_axis)(random.key(3), shape),
                   np.float64)
    cols = np.moveaxis(w, column_axis, -1).reshape(-1, shape[column_axis]) / 1.5
    small = min(cols.shape)
    gram = cols.T @ cols if cols.shape[0] >= cols.shape[1] else cols @ cols.T
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)


def test_random_orthogonal_is_unitary_for_complex() -> None:
    q = np.asarray(random.orthogonal(random.key(4), 4, (3,), jnp.complex64), np.complex128)
    np.testing.assert_allclose(q @ np.conj(np.swapaxes(q, -1, -2)), np.broadcast_to(
        np.eye(4), (3, 4, 4)), atol=1e-5)


def test_delta_orthogonal_has_one_orthogonal_centre_tap() -> None:
    w = np.asarray(ini.delta_orthogonal()(random.key(5), (3, 5, 4, 4)), np.float64)
    centre = w[1, 2]
    np.testing.assert_allclose(centre @ centre.T, np.eye(4), atol=1e-5)
    mask = np.ones(w.shape[:2], bool)
    mask[1, 2] = False
    assert not w[mask].any()


def test_initializers_follow_the_x64_default_dtype() -> None:
    for init in (ini.zeros, ini.normal(), ini.glorot_uniform(), ini.orthogonal()):
        assert init(random.key(0), (2, 2)).dtype == np.float32
        with x64_mode(True):
            assert init(random.key(0), (2, 2)).dtype == np.float64


def test_jit_and_vmap_agree_with_eager() -> None:
    """Initializers without sums of products give the same bits eager, under jit and vmap."""
    keys = random.split(random.key(9), 4)
    for init in (ini.normal(0.3), ini.he_uniform(), ini.lecun_normal(), ini.orthogonal()):
        eager = np.stack([np.asarray(init(k, (5, 3))) for k in keys])
        batched = np.asarray(pyjax.vmap(lambda k: init(k, (5, 3)))(keys))
        jitted = np.stack([np.asarray(pyjax.jit(lambda k: init(k, (5, 3)))(k)) for k in keys])
        np.testing.assert_array_equal(batched, eager)
        np.testing.assert_allclose(jitted, eager, rtol=1e-6, atol=1e-7)


def test_binomial_moments() -> None:
    for n, p in ((7., 0.3), (200., 0.6), (1000., 0.02), (40., 0.97)):
        x = np.asarray(random.binomial(random.key(6), n, p, (20000,)), np.float64)
        assert ((x >= 0) & (x <= n) & (x == np.floor(x))).all()
        np.testing.assert_allclose(x.mean(), n * p, rtol=0.02, atol=0.02)
        np.testing.assert_allclose(x.var(), n * p * (1 - p), rtol=0.06)


def test_multinomial_counts_sum_to_n() -> None:
    p = jnp.array([[.1, .2, .3, .4], [.7, 0., .3, 0.]])
    x = np.asarray(random.multinomial(random.key(7), jnp.array([50., 5000.]), p,
                                      shape=(3000, 2, 4)))
    np.testing.assert_array_equal(x.sum(-1), np.broadcast_to([50., 5000.], (3000, 2)))
    np.testing.assert_allclose(x.mean(0), np.array([[50.], [5000.]]) * np.asarray(p),
                               rtol=0.02, atol=0.05)
    assert (x[:, 1, 1] == 0).all() and (x[:, 1, 3] == 0).all()
