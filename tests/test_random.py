"""jax.random: bits, keys and samplers against values recorded from JAX 0.10.2
(tests/data/random.json, written by tests/oracle/record_random.py), statistical checks of every
distribution, and key arrays under jit, as pytree leaves and where NumPy refuses them."""
from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest
import scipy.stats as st

import pyjax
import pyjax.numpy as jnp
from pyjax import random
from pyjax._src.primitives.prng import threefry2x32
from pyjax._src.random.keys import KeyTy

HERE = os.path.dirname(__file__)
RECORDS = json.load(open(os.path.join(HERE, "data", "random.json")))["records"]
SCOPE = {"random": random, "jnp": jnp, "np": np}
_ADDR = re.compile(r"0x[0-9a-fA-F]{6,}")

#: Samplers that pass through functions pyjax computes with libm/SciPy rather than with XLA's
#: own polynomials (log, log1p, erf, pow, lgamma): they agree to float rounding, not in ulps.
LIBM_DERIVED = {"exponential", "truncated_normal"}

#: Recorded jaxprs pyjax does not print identically yet, and why.
JAXPR_DIFFERENCES: dict[str, str] = {}


def _records(kind: str) -> list:
    return [pytest.param(r, id=f"{r['name']}{'-x64' if r['x64'] else ''}")
            for r in RECORDS if r["kind"] == kind]


def _configure_as_recorded(record: dict) -> None:
    pyjax.config.update("jax_enable_x64", record["x64"])
    pyjax.config.update("jax_threefry_partitionable", record.get("partitionable", True))


def _encode(x) -> tuple[str, list, np.ndarray]:
    """dtype name, shape and element bits (floats as unsigned ints), as the recorder stores."""
    if isinstance(getattr(x, "dtype", None), KeyTy):
        x = random.key_data(x)
    a = np.asarray(x)
    if a.dtype.kind in "fcV":  # V: bfloat16
        a = a.view(f"u{a.itemsize // 2 if a.dtype.kind == 'c' else a.itemsize}")
    return np.asarray(x).dtype.name, list(np.shape(x)), a.ravel()


def _ulps(a: np.ndarray, b: np.ndarray, width: int) -> np.ndarray:
    """Distance in ulps between floats given as unsigned bit patterns of `width` bits."""
    def ordered(bits: np.ndarray) -> np.ndarray:
        u = bits.astype(np.uint64)
        sign = np.uint64(1) << np.uint64(width - 1)
        magnitude = (u & (sign - np.uint64(1))).astype(np.int64)
        return np.where(u & sign, -magnitude, magnitude)
    return np.abs(ordered(a) - ordered(b))


@pytest.fixture(autouse=True)
def _restore_flags():
    previous = pyjax.config.x64, pyjax.config.threefry_partitionable
    yield
    pyjax.config.update("jax_enable_x64", previous[0])
    pyjax.config.update("jax_threefry_partitionable", previous[1])


# ---------------------------------------------------------------------------------------------
# Recorded values, errors and jaxprs
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("record", _records("value"))
def test_value_matches_jax(record: dict) -> None:
    _configure_as_recorded(record)
    dtype, shape, bits = _encode(eval(record["expr"], dict(SCOPE)))
    assert (dtype, shape) == (record["dtype"], record["shape"])
    expected = np.array(record["bits"], dtype=bits.dtype)
    if np.dtype(jnp.dtype(dtype)).kind not in "fcV":  # integers and keys: identical bits
        np.testing.assert_array_equal(bits, expected)
    elif record["name"] in LIBM_DERIVED:
        got, want = (np.asarray(v).view(jnp.dtype(dtype)) for v in (bits, expected))
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    else:
        assert _ulps(bits, expected, bits.dtype.itemsize * 8).max(initial=0) <= 2


@pytest.mark.parametrize("record", _records("error"))
def test_error_matches_jax(record: dict) -> None:
    with pytest.raises(Exception) as info:
        eval(record["expr"], dict(SCOPE))
    assert type(info.value).__name__ == record["type"]
    assert _ADDR.sub("0x?", str(info.value)) == record["message"]


@pytest.mark.parametrize("record", [
    pytest.param(r, id=r["name"], marks=[pytest.mark.xfail(strict=True,
                                                           reason=JAXPR_DIFFERENCES[r["name"]])]
                 if r["name"] in JAXPR_DIFFERENCES else [])
    for r in RECORDS if r["kind"] == "jaxpr"])
def test_jaxpr_matches_jax(record: dict) -> None:
    fn, arg = eval(record["fn"], dict(SCOPE)), eval(record["arg"], dict(SCOPE))
    assert str(pyjax.make_jaxpr(fn)(arg)) == record["text"]


def test_threefry_known_answers() -> None:
    """Random123's known-answer vectors for Threefry-2x32 with 20 rounds."""
    cases = [((0, 0), (0, 0), (0x6b200159, 0x99ba4efe)),
             ((0xffffffff,) * 2, (0xffffffff,) * 2, (0x1cb996fc, 0xbb002be7)),
             ((0x13198a2e, 0x03707344), (0x243f6a88, 0x85a308d3), (0xc4923a9c, 0x483df7a0))]
    for key, count, expected in cases:
        out = threefry2x32(*(np.uint32(v) for v in key + count))
        assert [int(v) for v in out] == list(expected)


def test_threefry_broadcasts_and_chunks() -> None:
    """Large inputs are hashed in chunks: the same answer as hashing each element alone."""
    counts = jnp.arange(200_000, dtype=jnp.uint32)
    hi, lo = threefry2x32(np.uint32(1), np.uint32(2), np.uint32(0), counts)
    for i in (0, 65535, 65536, 199_999):
        one = threefry2x32(np.uint32(1), np.uint32(2), np.uint32(0), np.uint32(i))
        assert (int(hi[i]), int(lo[i])) == (int(one[0]), int(one[1]))
    assert pyjax.make_jaxpr(threefry2x32)(*(jnp.zeros(3, jnp.uint32),) * 4).eqns[0] \
        .primitive.name == "threefry2x32"
    with pytest.raises(TypeError, match="must have uint32 type"):
        threefry2x32(jnp.zeros(2, jnp.int32), *(jnp.zeros(2, jnp.uint32),) * 3)


# ---------------------------------------------------------------------------------------------
# Statistics: every distribution against its law (fixed keys, so the verdicts are reproducible)
# ---------------------------------------------------------------------------------------------

N = 20_000
P_MIN = 1e-3  # KS / chi-square p-values below this fail


def _sample(fn, *args, **kwargs) -> np.ndarray:
    return np.asarray(fn(random.key(2024), *args, **kwargs), dtype=np.float64)


CONTINUOUS = [
    ("uniform", lambda: _sample(random.uniform, (N,), minval=-2., maxval=3.),
     st.uniform(-2, 5)),
    ("normal", lambda: _sample(random.normal, (N,)), st.norm()),
    ("normal float16", lambda: _sample(random.normal, (N,), jnp.float16), st.norm()),
    ("truncated_normal", lambda: _sample(random.truncated_normal, -0.5, 1.5, (N,)),
     st.truncnorm(-0.5, 1.5)),
    ("exponential", lambda: _sample(random.exponential, (N,)), st.expon()),
    ("gumbel", lambda: _sample(random.gumbel, (N,)), st.gumbel_r()),
    ("gumbel high", lambda: _sample(random.gumbel, (N,), mode="high"), st.gumbel_r()),
    ("laplace", lambda: _sample(random.laplace, (N,)), st.laplace()),
    ("logistic", lambda: _sample(random.logistic, (N,)), st.logistic()),
    ("cauchy", lambda: _sample(random.cauchy, (N,)), st.cauchy()),
    ("gamma 0.4", lambda: _sample(random.gamma, 0.4, (N,)), st.gamma(0.4)),
    ("gamma 3", lambda: _sample(random.gamma, 3.0, (N,)), st.gamma(3.0)),
    ("loggamma", lambda: np.exp(_sample(random.loggamma, 0.7, (N,))), st.gamma(0.7)),
    ("beta", lambda: _sample(random.beta, 2.0, 5.0, (N,)), st.beta(2, 5)),
    ("dirichlet marginal", lambda: _sample(random.dirichlet, jnp.array([1., 2., 3.]),
                                           (N,))[:, 1], st.beta(2, 4)),
    ("chisquare", lambda: _sample(random.chisquare, 3.0, (N,)), st.chi2(3)),
    ("t", lambda: _sample(random.t, 5.0, (N,)), st.t(5)),
    ("f", lambda: _sample(random.f, 4.0, 7.0, (N,)), st.f(4, 7)),
    ("pareto", lambda: _sample(random.pareto, 3.0, (N,)), st.pareto(3)),
    ("rayleigh", lambda: _sample(random.rayleigh, 2.0, (N,)), st.rayleigh(scale=2)),
    ("weibull_min", lambda: _sample(random.weibull_min, 2.0, 1.5, (N,)),
     st.weibull_min(1.5, scale=2)),
    ("maxwell", lambda: _sample(random.maxwell, (N,)), st.maxwell()),
    ("double_sided_maxwell magnitude", lambda: np.abs(_sample(
        random.double_sided_maxwell, 1.0, 2.0, (N,)) - 1.0) / 2.0, st.maxwell()),
    ("wald", lambda: _sample(random.wald, 2.0, (N,)), st.invgauss(2.0)),
    ("triangular", lambda: _sample(random.triangular, 0.0, 1.0, 3.0, (N,)),
     st.triang(1 / 3, loc=0, scale=3)),
    ("lognormal", lambda: _sample(random.lognormal, 0.5, (N,)), st.lognorm(0.5)),
    ("generalized_normal", lambda: _sample(random.generalized_normal, 1.5, (N,)),
     st.gennorm(1.5)),
    ("multivariate_normal marginal", lambda: _sample(
        random.multivariate_normal, jnp.array([1., -1.]),
        jnp.array([[2., 0.6], [0.6, 1.]]), (N,))[:, 0], st.norm(1, np.sqrt(2))),
]


@pytest.mark.parametrize("name,draw,law", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_distribution(name: str, draw, law) -> None:
    samples = draw()
    assert samples.shape == (N,) and np.isfinite(samples).all()
    assert st.kstest(samples, law.cdf).pvalue > P_MIN
    if np.isfinite(law.var()):
        assert abs(samples.mean() - law.mean()) < 5 * np.sqrt(law.var() / N)


def _chi_square(counts: np.ndarray, probabilities: np.ndarray) -> float:
    return st.chisquare(counts, probabilities * counts.sum()).pvalue


def test_randint_bernoulli_rademacher_are_uniform() -> None:
    draws = np.asarray(random.randint(random.key(1), (N,), -3, 7))
    assert draws.min() == -3 and draws.max() == 6
    assert _chi_square(np.bincount(draws + 3), np.full(10, 0.1)) > P_MIN
    flips = np.asarray(random.bernoulli(random.key(2), 0.3, (N,)))
    assert flips.dtype == np.bool_ and abs(flips.mean() - 0.3) < 5 * np.sqrt(0.21 / N)
    signs = np.asarray(random.rademacher(random.key(3), (N,)))
    assert set(np.unique(signs)) == {-1, 1} and abs(signs.mean()) < 5 / np.sqrt(N)


def test_categorical_and_choice_frequencies() -> None:
    p = np.array([0.1, 0.2, 0.3, 0.4])
    draws = np.asarray(random.categorical(random.key(4), jnp.log(jnp.array(p)), shape=(N,)))
    assert _chi_square(np.bincount(draws, minlength=4), p) > P_MIN
    picks = np.asarray(random.choice(random.key(5), 4, (N,), p=jnp.array(p)))
    assert _chi_square(np.bincount(picks, minlength=4), p) > P_MIN
    picks = np.asarray(random.choice(random.key(6), 7, (N,)))
    assert _chi_square(np.bincount(picks, minlength=7), np.full(7, 1 / 7)) > P_MIN


def test_sampling_without_replacement_gives_distinct_values() -> None:
    for seed in range(20):
        drawn = np.asarray(random.choice(random.key(seed), 10, (6,), replace=False))
        assert len(set(drawn.tolist())) == 6
        weighted = np.asarray(random.choice(random.key(seed), 5, (5,), replace=False,
                                            p=jnp.array([.1, .2, .3, .2, .2])))
        assert sorted(weighted.tolist()) == list(range(5))
        top = np.asarray(random.categorical(random.key(seed), jnp.zeros((3, 4)), shape=(4, 3),
                                            replace=False))
        assert all(sorted(top[:, j].tolist()) == [0, 1, 2, 3] for j in range(3))


def test_permutation_is_uniform() -> None:
    firsts = [int(random.permutation(random.key(seed), 5)[0]) for seed in range(2000)]
    assert _chi_square(np.bincount(firsts, minlength=5), np.full(5, 0.2)) > P_MIN
    perm = np.asarray(random.permutation(random.key(7), jnp.arange(3000)))
    assert sorted(perm.tolist()) == list(range(3000)) and (perm != np.arange(3000)).any()


@pytest.mark.parametrize("lam", [0.7, 4.0, 35.0])
def test_poisson_moments(lam: float) -> None:
    draws = np.asarray(random.poisson(random.key(8), lam, (N,)))
    assert draws.dtype == np.int32 and draws.min() >= 0
    assert abs(draws.mean() - lam) < 5 * np.sqrt(lam / N)
    assert abs(draws.var() / lam - 1) < 0.06
    counts = np.bincount(draws)
    support = np.arange(len(counts))
    expected = st.poisson(lam).pmf(support)
    keep = expected * N > 20
    assert st.chisquare(counts[keep], expected[keep] / expected[keep].sum()
                        * counts[keep].sum()).pvalue > P_MIN


def test_geometric_moments() -> None:
    draws = np.asarray(random.geometric(random.key(9), 0.25, (N,)))
    assert draws.min() >= 1 and abs(draws.mean() - 4) < 5 * np.sqrt(12 / N)


def test_multivariate_normal_covariance() -> None:
    cov = np.array([[2., 0.6], [0.6, 1.]])
    for method in ("cholesky", "svd", "eigh"):
        draws = np.asarray(random.multivariate_normal(random.key(10), jnp.zeros(2),
                                                      jnp.array(cov), (N,), method=method))
        np.testing.assert_allclose(np.cov(draws.T), cov, atol=0.06)


def test_ball_and_dirichlet_supports() -> None:
    points = np.asarray(random.ball(random.key(11), 3, shape=(N,)))
    radii = np.linalg.norm(points, axis=1)
    assert radii.max() <= 1 and st.kstest(radii, st.powerlaw(3).cdf).pvalue > P_MIN
    simplex = np.asarray(random.dirichlet(random.key(12), jnp.array([0.5, 1., 2.]), (100,)))
    np.testing.assert_allclose(simplex.sum(-1), 1, rtol=1e-5)
    assert (simplex >= 0).all()


# ---------------------------------------------------------------------------------------------
# Keys
# ---------------------------------------------------------------------------------------------

def test_typed_key_prints_and_reports_like_jax() -> None:
    key = random.key(78)
    assert str(key) == repr(key) == "Array((), dtype=key<fry>) overlaying:\n[ 0 78]"
    assert (key.shape, key.ndim, key.dtype.name, key.itemsize) == ((), 0, "key<fry>", 8)
    assert random.key_impl(key) == random.key_impl(random.PRNGKey(0)) == "threefry2x32"
    with pytest.raises(TypeError, match="cannot be converted to a NumPy array"):
        np.asarray(key)
    with pytest.raises(TypeError, match="key array cannot be converted to boolean"):
        bool(key)


def test_key_arrays_index_like_arrays_of_keys() -> None:
    keys = random.split(random.key(1), 6)
    data = np.asarray(random.key_data(keys))
    assert len(keys) == 6 and keys.shape == (6,)
    np.testing.assert_array_equal(random.key_data(keys[2:4]), data[2:4])
    np.testing.assert_array_equal(random.key_data(keys.reshape(2, 3)[1, 0]), data[3])
    np.testing.assert_array_equal(random.key_data(keys.reshape(3, 2).T[1]), data[1::2])
    assert [bool(k == keys[i]) for i, k in enumerate(keys)] == [True] * 6
    np.testing.assert_array_equal(random.wrap_key_data(random.key_data(keys)) == keys, True)


def test_raw_and_typed_keys_draw_the_same_numbers() -> None:
    raw, typed = random.PRNGKey(5), random.key(5)
    np.testing.assert_array_equal(random.normal(raw, (4,)), random.normal(typed, (4,)))
    np.testing.assert_array_equal(random.split(raw), random.key_data(random.split(typed)))
    np.testing.assert_array_equal(random.fold_in(raw, 3),
                                  random.key_data(random.fold_in(typed, 3)))


def test_reusing_a_key_is_allowed_and_repeats_numbers() -> None:
    key = random.key(0)
    np.testing.assert_array_equal(random.uniform(key, (3,)), random.uniform(key, (3,)))
    np.testing.assert_array_equal(random.clone(key) == key, True)


def test_keys_as_jit_arguments_and_results() -> None:
    typed, raw = random.key(3), random.PRNGKey(3)
    sample = pyjax.jit(lambda k: random.normal(k, (3,)))
    np.testing.assert_array_equal(sample(typed), random.normal(typed, (3,)))
    np.testing.assert_array_equal(sample(raw), random.normal(raw, (3,)))
    split = pyjax.jit(random.split)(typed)
    assert isinstance(split, random.PRNGKeyArray) and split.shape == (2,)
    np.testing.assert_array_equal(random.key_data(split), random.key_data(random.split(typed)))
    inside = pyjax.jit(lambda k: random.split(k, 3)[1])(typed)
    np.testing.assert_array_equal(random.key_data(inside),
                                  random.key_data(random.split(typed, 3)[1]))
    closed = pyjax.jit(lambda x: x + random.uniform(typed, (2,)))(jnp.zeros(2))
    np.testing.assert_array_equal(closed, random.uniform(typed, (2,)))
    folded = pyjax.jit(random.fold_in)(typed, 7)
    np.testing.assert_array_equal(random.key_data(folded),
                                  random.key_data(random.fold_in(typed, 7)))


def test_key_arrays_transpose_under_jit() -> None:
    """A transposed key array's key data keeps its trailing key axis (vmap of the while loops
    of poisson over a non-leading key axis transposes keys)."""
    keys = random.split(random.key(7), (2, 3))
    got = pyjax.jit(lambda k: k.T)(keys)
    assert got.shape == (3, 2)
    np.testing.assert_array_equal(random.key_data(got),
                                  np.asarray(random.key_data(keys)).transpose(1, 0, 2))


def test_keys_are_pytree_leaves() -> None:
    tree = {"a": random.key(1), "b": [random.PRNGKey(2), jnp.ones(2)]}
    leaves = pyjax.tree_util.tree_leaves(tree)
    assert len(leaves) == 3 and isinstance(leaves[0], random.PRNGKeyArray)
    out = pyjax.jit(lambda t: (t, random.uniform(t["a"]) + random.uniform(t["b"][0])))(tree)
    assert isinstance(out[0]["a"], random.PRNGKeyArray)
    assert float(out[1]) == float(random.uniform(tree["a"]) + random.uniform(tree["b"][0]))


def test_jaxpr_of_typed_keys_prints_key_types() -> None:
    text = str(pyjax.make_jaxpr(lambda k: random.split(k, 4))(random.key(0)))
    assert "a:key<fry>[]" in text and "key<fry>[4] = random_split[shape=(4,)] a" in text


def test_lax_shape_ops_on_key_arrays_outside_jit_and_under_disable_jit():
    # JAX 0.10.2: lax.slice(split(key(0)), (1,), (2,)) is a (1,) key<fry> array over
    # [[928981903, 3453687069]]; randint(PRNGKey(27), (2, 1, 3), 0, 10) under disable_jit is
    # [[[6, 4, 0]], [[0, 8, 2]]] (eager key ops are typed by the key shape, not the buffer's)
    from pyjax import lax
    keys = random.split(random.key(0))
    piece = lax.slice(keys, (1,), (2,))
    assert piece.shape == (1,) and str(piece.dtype) == "key<fry>"
    np.testing.assert_array_equal(random.key_data(piece), [[928981903, 3453687069]])
    assert lax.squeeze(piece, (0,)).shape == ()
    with pyjax.disable_jit():
        got = random.randint(random.PRNGKey(27), (2, 1, 3), 0, 10)
    np.testing.assert_array_equal(got, [[[6, 4, 0]], [[0, 8, 2]]])


def test_jnp_array_and_asarray_keep_key_arrays():
    # JAX 0.10.2: jnp.asarray(key) is key; jnp.array(key) is a copy of dtype key<fry>; traced
    # jnp.array(key) is `copy` (optax's inject_hyperparams passes keys through jnp.asarray)
    key = random.key(0)
    assert jnp.asarray(key) is key
    copied = jnp.array(key)
    assert copied is not key and str(copied.dtype) == "key<fry>"
    np.testing.assert_array_equal(random.key_data(copied), [0, 0])
    assert str(pyjax.make_jaxpr(lambda: jnp.array(key))()) == \
        "{ lambda a:key<fry>[]; . let b:key<fry>[] = copy a in (b,) }"


def test_jnp_stack_and_concatenate_of_key_arrays():
    # JAX 0.10.2: stacking split(key(0), 3)'s rows gives back the (3,) key<fry> array over
    # [[1797259609, 2579123966], [928981903, 3453687069], [4146024105, 2718843009]]
    keys = random.split(random.key(0), 3)
    stacked = jnp.stack([keys[0], keys[1], keys[2]])
    assert stacked.shape == (3,) and str(stacked.dtype) == "key<fry>"
    np.testing.assert_array_equal(random.key_data(stacked), [
        [1797259609, 2579123966], [928981903, 3453687069], [4146024105, 2718843009]])
    assert random.key_data(jnp.concatenate([keys, keys])).shape == (6, 2)


def test_jnp_astype_of_a_key_array_to_its_own_dtype_and_where_over_keys():
    # JAX 0.10.2: jnp.astype(k, k.dtype) is k (no equation); where(True, key(1), key(0)) picks
    # key(1) (optax's MultiSteps does astype(where(emit, new, old), old.dtype) on key states)
    k0, k1 = random.key(0), random.key(1)
    assert jnp.astype(k0, k0.dtype) is k0
    assert str(pyjax.make_jaxpr(lambda a: jnp.astype(a, a.dtype))(k0)) == \
        "{ lambda ; a:key<fry>[]. let  in (a,) }"
    picked = pyjax.jit(lambda e, a, b: jnp.astype(jnp.where(e, b, a), a.dtype))(True, k0, k1)
    np.testing.assert_array_equal(random.key_data(picked), [0, 1])
