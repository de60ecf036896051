"""The eager fast paths of random.normal and random.uniform (pyjax/_src/random/fast.py) and of
random.split and random.fold_in (fast_keys.py) give exactly what the jit path gives (the same
bits, dtype, weak type and shape, the same errors and warnings), and tracing never sees them:
jaxprs, jit, vmap and grad are unchanged.

The jit path is what the samplers did before the fast path: here it is reached by making the
fast path decline (`fast.normal` / `fast.uniform` answering None).  A spy checks that the fast
path really answered where it should, so the comparisons are never of the jit path with itself.
"""
from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import random
from pyjax._src.backend import tier1
from pyjax._src.backend.tier1 import threefry as native
from pyjax._src.primitives import prng
from pyjax._src.random import fast, fast_keys
from pyjax._src.random.keys import PRNGKeyArray

TIER1 = tier1.reason() is None
DTYPES = ["float32", "float16", "bfloat16", "float64"]
SHAPES = [(), (10,), (3, 4)]
SEEDS = [0, 1, 42, 2**31 + 5]


def _dtype(name):
    return getattr(jnp, name)


@contextlib.contextmanager
def _x64_for(dtype_name):
    with pyjax.enable_x64(dtype_name == "float64"):
        yield


@contextlib.contextmanager
def declining(module, *names):
    """`module`'s fast paths `names` declining every call: the ordinary path runs."""
    saved = [getattr(module, n) for n in names]
    for n in names:
        setattr(module, n, lambda *args: None)
    try:
        yield
    finally:
        for n, fn in zip(names, saved):
            setattr(module, n, fn)


class Spy:
    """Counts the calls `module`'s fast paths `names` answered."""

    def __init__(self, module=fast, names=("normal", "uniform")):
        self.module, self.names, self.answered = module, names, 0

    def __enter__(self):
        self.saved = [getattr(self.module, n) for n in self.names]

        def spied(fn):
            def call(*args):
                out = fn(*args)
                self.answered += out is not None
                return out
            return call
        for n, fn in zip(self.names, self.saved):
            setattr(self.module, n, spied(fn))
        return self

    def __exit__(self, *exc):
        for n, fn in zip(self.names, self.saved):
            setattr(self.module, n, fn)


def jit_path():
    """The samplers with the fast path declining every call."""
    return declining(fast, "normal", "uniform")


def assert_same(got, want):
    """Same type (once computed: a jitted result may be pending), dtype, weak type, shape
    and bits."""
    assert type(pyjax.block_until_ready(got)) is type(pyjax.block_until_ready(want))
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    assert got.weak_type == want.weak_type
    g, w = np.asarray(got), np.asarray(want)
    np.testing.assert_array_equal(g.reshape(-1).view(np.uint8), w.reshape(-1).view(np.uint8))


def both(fn, *args, expect_fast=True, **kwargs):
    """fn's result through the fast path (checked to have answered) and through the jit path."""
    with Spy() as spy:
        got = fn(*args, **kwargs)
    assert spy.answered == (1 if expect_fast else 0)
    with jit_path():
        want = fn(*args, **kwargs)
    return got, want


def _keys(seed):
    return [random.PRNGKey(seed), random.key(seed)]


@pytest.fixture(scope="module", autouse=True)
def compiled():
    """Every kernel the fast path uses, compiled (the steady state), unless tier 1 is off."""
    for name in DTYPES:
        with _x64_for(name):
            for key in _keys(0):
                random.normal(key, (3,), _dtype(name))
                random.uniform(key, (3,), _dtype(name))
                random.uniform(key, (3,), _dtype(name), 0.5, 2.)
                random.split(key)
                random.fold_in(key, 1)
    tier1.wait()
    fast._plans.clear()
    yield


# ---------------------------------------------------------------------------------------------
# The same numbers
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("sampler", ["normal", "uniform"])
def test_same_as_jit_path(sampler, shape, dtype):
    fn = getattr(random, sampler)
    with _x64_for(dtype):
        for seed in SEEDS:
            for key in _keys(seed):
                assert_same(*both(fn, key, shape, _dtype(dtype)))


@pytest.mark.parametrize("sampler", ["normal", "uniform"])
def test_default_dtype_and_keywords(sampler):
    fn = getattr(random, sampler)
    key = random.PRNGKey(7)
    assert_same(*both(fn, key))
    assert_same(*both(fn, key, (5,)))
    assert_same(*both(fn, key, shape=[2, 3]))
    assert_same(*both(fn, key=key, shape=(4,), dtype=jnp.float32))
    with pyjax.enable_x64(True):
        got, want = both(fn, key, (5,))
        assert got.dtype == np.float64
        assert_same(got, want)


BOUNDS = [
    (0.5, 2.),
    (-3, 7),
    (2., -1.),                       # minval > maxval
    (-0., 0.),
    (0., -0.),
    (-np.inf, np.inf),
    (0., np.inf),
    (np.nan, 1.),
    (1e-40, 2e-40),                  # subnormal bounds: flushed, as under jit
    (np.float32(0.25), np.float32(0.75)),
    (np.float64(1) / 3, 2.),
    (np.array(0.5), np.array(2.5, np.float32)),
    (np.array([0., 1., 2., 3.]), 10.),
    (np.zeros((3, 1)), np.ones((1, 4))),
    (np.arange(12.).reshape(3, 4), 20.),
    (np.zeros((1, 1), np.int32), 5),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bounds", BOUNDS, ids=lambda b: f"{b[0]!r}-{b[1]!r}"[:40])
def test_uniform_bounds(bounds, dtype):
    minval, maxval = bounds
    with _x64_for(dtype):
        for as_array in (False, True):
            lo, hi = ((jnp.asarray(minval), jnp.asarray(maxval)) if as_array
                      else (minval, maxval))
            for key in _keys(3):
                assert_same(*both(random.uniform, key, (3, 4), _dtype(dtype), lo, hi))


def test_uniform_bounds_weak_and_other_dtypes():
    key = random.PRNGKey(11)
    weak = jnp.asarray(0.5)  # a weak float32
    assert weak.weak_type
    assert_same(*both(random.uniform, key, (6,), jnp.float16, weak, 3.))
    assert_same(*both(random.uniform, key, (6,), jnp.float32, jnp.asarray(1, jnp.int8),
                      jnp.asarray(4, jnp.uint16)))
    assert_same(*both(random.uniform, key, (6,), jnp.float16, jnp.asarray(0.1, jnp.float32),
                      jnp.asarray(0.9, jnp.float32)))
    assert_same(*both(random.uniform, key, (2, 3), jnp.float32, jnp.zeros(3), jnp.ones((2, 1))))


def test_raw_key_views_and_split_keys():
    keys = random.split(random.PRNGKey(5), 4)
    for k in keys:  # rows of a raw key array
        assert_same(*both(random.normal, k, (5,)))
    typed = random.split(random.key(5), 3)
    for k in typed:
        assert_same(*both(random.uniform, k, (5,)))
    column_major = jnp.asarray(np.asfortranarray(np.array([[1, 2], [3, 4]], np.uint32)).T[1])
    assert_same(*both(random.normal, column_major, (4,)))


@pytest.mark.parametrize("size", [1000, 5000, 70000])
def test_larger_samples(size):
    key = random.key(9)
    for sampler in ("normal", "uniform"):
        assert_same(*both(getattr(random, sampler), key, (size,)))
    # NumPy arithmetic is left to the executable's fused kernels beyond fast.MAX_SIZE
    big = size > fast.MAX_SIZE
    assert_same(*both(random.normal, key, (size,), jnp.float16, expect_fast=not big))
    assert_same(*both(random.uniform, key, (size,), jnp.float32, 0.5, 2., expect_fast=not big))


def test_numpy_fallback_while_kernels_compile(monkeypatch):
    """Before (or without) the native kernels the fast path computes with NumPy: the same."""
    fast._plans.clear()
    monkeypatch.setattr(native._samples, "get", lambda kind: None)
    try:
        for name in DTYPES:
            with _x64_for(name):
                for key in _keys(13):
                    for shape in SHAPES:
                        assert_same(*both(random.normal, key, shape, _dtype(name)))
                        assert_same(*both(random.uniform, key, shape, _dtype(name)))
                        assert_same(*both(random.uniform, key, shape, _dtype(name), -1., 4.))
    finally:
        fast._plans.clear()


# ---------------------------------------------------------------------------------------------
# Where the fast path declines: the jit path, with its errors and warnings
# ---------------------------------------------------------------------------------------------

def _outcome(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = ("ok", fn())
        except Exception as e:  # noqa: BLE001
            out = ("error", type(e), str(e))
    return out, [(w.category, str(w.message)) for w in caught]


ERRORS = {
    "int dtype": lambda: random.normal(random.PRNGKey(0), (3,), jnp.int32),
    "uniform int dtype": lambda: random.uniform(random.PRNGKey(0), (3,), jnp.int32),
    "negative shape": lambda: random.uniform(random.PRNGKey(0), (-1,)),
    "float shape": lambda: random.normal(random.PRNGKey(0), (3.0,)),
    "int shape": lambda: random.normal(random.PRNGKey(0), 3),
    "bounds too big": lambda: random.uniform(random.PRNGKey(0), (3, 4), minval=jnp.zeros(5)),
    "bounds rank": lambda: random.uniform(random.PRNGKey(0), (4,), maxval=jnp.ones((2, 4))),
    "bounds str": lambda: random.uniform(random.PRNGKey(0), (3,), minval="a"),
    "batched raw key": lambda: random.normal(random.split(random.PRNGKey(0)), (3,)),
    "batched typed key": lambda: random.uniform(random.split(random.key(0)), (3,)),
    "key data shape": lambda: random.normal(jnp.zeros(3, jnp.uint32), (3,)),
    "float key": lambda: random.normal(jnp.zeros(2, jnp.float32), (3,)),
    "int32 key": lambda: random.uniform(jnp.zeros(2, jnp.int32), (3,)),
    "list key": lambda: random.normal([0, 0], (3,)),
    "numpy key": lambda: random.normal(np.zeros(2, np.uint32), (3,)),
    "float64 under x64 off": lambda: random.normal(random.PRNGKey(0), (3,), jnp.float64),
    "uniform float64 x64 off": lambda: random.uniform(random.PRNGKey(0), (3,), np.float64),
    "complex normal": lambda: random.normal(random.PRNGKey(0), (3,), jnp.complex64),
    "huge int bound": lambda: random.uniform(random.PRNGKey(0), (3,), minval=2**40),
    "complex bound": lambda: random.uniform(random.PRNGKey(0), (3,), minval=1j),
    "bool bound": lambda: random.uniform(random.PRNGKey(0), (3,), maxval=True),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_warnings_and_declined_cases(name):
    got, got_warnings = _outcome(ERRORS[name])
    with jit_path():
        want, want_warnings = _outcome(ERRORS[name])
    assert got_warnings == want_warnings
    assert got[0] == want[0]
    if got[0] == "ok":
        assert_same(got[1], want[1])
    else:
        assert got[1:] == want[1:]


def test_options_that_decline():
    key = random.PRNGKey(2)
    with pyjax.disable_jit():
        assert_same(*both(random.normal, key, (4,), expect_fast=False))
    with pyjax.threefry_partitionable(False):
        assert_same(*both(random.normal, key, (4,), expect_fast=False))
        assert_same(*both(random.uniform, key, (4,), expect_fast=False))
    assert_same(*both(random.normal, key, (4,)))  # and back


@pytest.mark.parametrize("option", ["jax_disable_jit", "jax_no_execution"])
def test_process_wide_options_that_decline(option):
    """Set with config.update (no thread override), the options decline as well."""
    key = random.PRNGKey(2)
    pyjax.config.update(option, True)
    try:
        if option == "jax_disable_jit":
            assert_same(*both(random.normal, key, (4,), expect_fast=False))
        else:
            assert fast.normal(key, (4,), None) is None
    finally:
        pyjax.config.update(option, False)
    assert_same(*both(random.normal, key, (4,)))  # and back


# ---------------------------------------------------------------------------------------------
# Tracing never takes the fast path
# ---------------------------------------------------------------------------------------------

NORMAL_JAXPR = """\
{ lambda ; a:u32[2]. let
    b:key<fry>[] = random_wrap[impl=fry] a
    c:f32[] = jit[
      name=_normal
      jaxpr={ lambda ; b:key<fry>[]. let
          c:f32[] = jit[
            name=_normal_real
            jaxpr={ lambda ; b:key<fry>[]. let
                d:f32[] = jit[
                  name=_uniform
                  jaxpr={ lambda ; b:key<fry>[] e:f32[] f:f32[]. let
                      g:u32[] = random_bits[bit_width=32 shape=()] b
                      h:u32[] = shift_right_logical g 9:u32[]
                      i:u32[] = or h 1065353216:u32[]
                      j:f32[] = bitcast_convert_type[new_dtype=float32] i
                      k:f32[] = sub j 1.0:f32[]
                      l:f32[] = sub f e
                      m:f32[] = mul k l
                      n:f32[] = add m e
                      o:f32[] = reshape[
                        dimensions=None
                        new_sizes=()
                        sharding=None
                      ] n
                      d:f32[] = max e o
                    in (d,) }
                ] b -0.9999999403953552:f32[] 1.0:f32[]
                p:f32[] = erf_inv d
                c:f32[] = mul 1.4142135381698608:f32[] p
              in (c,) }
          ] b
        in (c,) }
    ] b
  in (c,) }"""

UNIFORM_JAXPR = """\
let _uniform = { lambda ; a:key<fry>[] b:f32[3,1] c:f32[]. let
    d:f16[3,1] = convert_element_type[new_dtype=float16 weak_type=False] b
    e:f16[] = convert_element_type[new_dtype=float16 weak_type=False] c
    f:f16[1,1] = broadcast_in_dim e
    g:u16[3,4] = random_bits[bit_width=16 shape=(3, 4)] a
    h:u16[3,4] = shift_right_logical g 6:u16[]
    i:u16[3,4] = or h 15360:u16[]
    j:f16[3,4] = bitcast_convert_type[new_dtype=float16] i
    k:f16[3,4] = sub j 1.0:f16[]
    l:f16[3,1] = sub f d
    m:f16[3,4] = mul k l
    n:f16[3,4] = add m d
    o:f16[3,4] = max d n
  in (o,) } in
{ lambda ; p:u32[2] q:f32[3,1]. let
    r:key<fry>[] = random_wrap[impl=fry] p
    s:f16[3,4] = jit[name=_uniform jaxpr=_uniform] r q 2.0:f32[]
  in (s,) }"""


def test_jaxprs_unchanged():
    key = random.PRNGKey(0)
    with Spy() as spy:
        normal = str(pyjax.make_jaxpr(random.normal)(key))
        uniform = str(pyjax.make_jaxpr(
            lambda k, m: random.uniform(k, (3, 4), jnp.float16, m, 2.))(key, jnp.zeros((3, 1))))
        typed = str(pyjax.make_jaxpr(random.uniform)(random.key(0)))
    assert spy.answered == 0
    assert normal == NORMAL_JAXPR
    assert uniform == UNIFORM_JAXPR
    with jit_path():
        assert str(pyjax.make_jaxpr(random.uniform)(random.key(0))) == typed


@pytest.mark.parametrize("dtype", DTYPES)
def test_jit_vmap_grad(dtype):
    with _x64_for(dtype):
        dt = _dtype(dtype)
        key = random.PRNGKey(21)
        for sampler in ("normal", "uniform"):
            fn = getattr(random, sampler)
            eager = fn(key, (3, 4), dt)
            traced = pyjax.jit(lambda k, fn=fn: fn(k, (3, 4), dt))(key)
            assert_same(traced, eager)
            keys = random.split(key, 3)
            batched = pyjax.vmap(lambda k, fn=fn: fn(k, (4,), dt))(keys)
            for i in range(3):
                np.testing.assert_array_equal(np.asarray(batched[i]),
                                              np.asarray(fn(keys[i], (4,), dt)))

    def loss(lo, hi):
        return jnp.sum(random.uniform(random.PRNGKey(4), (5,), jnp.float32, lo, hi) ** 2)
    got = pyjax.grad(loss, argnums=(0, 1))(0.5, 2.)
    with jit_path():
        want = pyjax.grad(loss, argnums=(0, 1))(0.5, 2.)
    for g, w in zip(got, want):
        assert_same(g, w)


# ---------------------------------------------------------------------------------------------
# The kernels against NumPy
# ---------------------------------------------------------------------------------------------

def _numpy_words(key, bit_width, size):
    a, b = np.empty(size, np.uint32), np.empty(size, np.uint32)
    prng._hash_block(key[0], key[1], np.zeros((), np.uint32), np.arange(size, dtype=np.uint32),
                     a, b, np.empty(size, np.uint32))
    if bit_width == 64:
        return (a.astype(np.uint64) << np.uint64(32)) | b
    return (a ^ b).astype(f"uint{bit_width}")


pytestmark_kernels = pytest.mark.skipif(not TIER1, reason=f"tier 1 off: {tier1.reason()}")


def _kernel(kind):
    native.sample_kernel(kind)
    tier1.wait()
    return native.sample_kernel(kind)


@pytestmark_kernels
@pytest.mark.parametrize("bit_width", [8, 16, 32, 64])
def test_random_bits_kernel(bit_width):
    _kernel(("bits", bit_width))
    rng = np.random.default_rng(bit_width)
    for size in (0, 1, 7, 33, 1000, 70001):
        key = rng.integers(0, 2**32, 2, dtype=np.uint64).astype(np.uint32)
        got = native.random_bits(key, bit_width, size)
        want = _numpy_words(key, bit_width, size)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytestmark_kernels
@pytest.mark.parametrize("code", ["f32", "f64"])
def test_unit_kernels(code):
    _kernel(("unit", code))
    bits, dtype, nmant = (32, np.float32, 23) if code == "f32" else (64, np.float64, 52)
    rng = np.random.default_rng(1)
    for size in (1, 10, 4099):
        key = rng.integers(0, 2**32, 2, dtype=np.uint64).astype(np.uint32)
        words = _numpy_words(key, bits, size)
        one = np.array(1.0, dtype).view(words.dtype)
        want = ((words >> words.dtype.type(bits - nmant)) | one).view(dtype) - dtype(1)
        np.testing.assert_array_equal(native.sample(key, ("unit", code), size), want)


@pytestmark_kernels
def test_normal_kernel():
    _kernel(("normal", "f32"))
    from pyjax._src.backend.tier1 import xla_math as native_math
    native_math.evaluate("erf_inv", np.zeros(1, np.float32))
    tier1.wait()
    rng = np.random.default_rng(2)
    lo = np.nextafter(np.float32(-1), np.float32(0))
    for size in (1, 10, 100_003):
        key = rng.integers(0, 2**32, 2, dtype=np.uint64).astype(np.uint32)
        words = _numpy_words(key, 32, size)
        u = ((words >> np.uint32(9)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1)
        x = u * np.float32(2) + lo
        want = np.float32(np.sqrt(2)) * native_math.evaluate("erf_inv", x)
        np.testing.assert_array_equal(native.sample(key, ("normal", "f32"), size), want)


# ---------------------------------------------------------------------------------------------
# split and fold_in (fast_keys.py)
# ---------------------------------------------------------------------------------------------

def ordinary_keys_path():
    """split and fold_in with their fast path declining every call."""
    return declining(fast_keys, "split", "fold_in")


def KeysSpy():  # noqa: N802 - used as the class it stands for
    """Counts the split / fold_in calls the fast path answered."""
    return Spy(fast_keys, ("split", "fold_in"))


def keys_both(fn, *args, expect_fast=True):
    """fn's outcome (result or error, and warnings) through the fast path (checked to have
    answered, or not) and through the ordinary path."""
    with KeysSpy() as spy:
        got = _outcome(lambda: fn(*args))
    assert spy.answered == (1 if expect_fast else 0)
    with ordinary_keys_path():
        want = _outcome(lambda: fn(*args))
    return got, want


def assert_same_keys(got, want):
    """Same type, dtype and shape, the same key data (raw keys: as assert_same)."""
    if type(want) is PRNGKeyArray:
        assert type(got) is type(want)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert_same(random.key_data(got), random.key_data(want))
    else:
        assert_same(got, want)


def assert_same_outcome(got, want):
    (g, g_warnings), (w, w_warnings) = got, want
    assert g_warnings == w_warnings
    assert g[0] == w[0]
    if g[0] == "ok":
        assert_same_keys(g[1], w[1])
    else:
        assert g[1:] == w[1:]

NUMS = [2, 1, 3, 7, 0, 100, (), (4,), (2, 3), (0, 4), (3, 1, 2)]
FOLD_DATA = [0, 1, 7, 12345, 2**31 - 1, 2**31, 2**32 - 1]
KEY_SEEDS = [0, 1, 42, -1, 2**31 + 5, 2**63 - 1]


def _both_key_kinds(seed):
    with pyjax.enable_x64(True):  # (seeds beyond 32 bits keep their high word)
        return [random.PRNGKey(seed), random.key(seed)]


@pytest.mark.parametrize("num", NUMS, ids=str)
def test_split_same_as_ordinary_path(num):
    for seed in KEY_SEEDS:
        for key in _both_key_kinds(seed):
            assert_same_outcome(*keys_both(random.split, key, num))
    # the default num
    for key in _both_key_kinds(3):
        assert_same_outcome(*keys_both(random.split, key))


@pytest.mark.parametrize("data", FOLD_DATA)
def test_fold_in_same_as_ordinary_path(data):
    for seed in KEY_SEEDS:
        for key in _both_key_kinds(seed):
            assert_same_outcome(*keys_both(random.fold_in, key, data))


def test_split_and_fold_in_of_derived_keys():
    """Keys that are rows of split's output (views of a larger buffer), a column-major view,
    keys made under jit, and chains of fast-path keys."""
    for key in _both_key_kinds(9):
        rows = random.split(key, 3)
        for k in rows:
            assert_same_outcome(*keys_both(random.split, k, 4))
            assert_same_outcome(*keys_both(random.fold_in, k, 2**32 - 2))
        jitted = pyjax.jit(lambda k: random.split(k)[1])(key)
        assert_same_outcome(*keys_both(random.fold_in, jitted, 5))
        chain = key
        for i in range(5):
            chain = random.fold_in(random.split(chain)[0], i)
        with ordinary_keys_path():
            want = key
            for i in range(5):
                want = random.fold_in(random.split(want)[0], i)
        assert_same_keys(chain, want)
    column_major = jnp.asarray(np.asfortranarray(np.array([[1, 2], [3, 4]], np.uint32)).T[1])
    assert_same_outcome(*keys_both(random.split, column_major, 3))
    assert_same_outcome(*keys_both(random.fold_in, column_major, 3))


def test_keys_without_the_native_kernel(monkeypatch):
    """Before (or without: tier 1 off) the native kernel, the primitives' impls make the keys:
    the same."""
    monkeypatch.setattr(native._samples, "get", lambda kind: None)
    for key in _both_key_kinds(13):
        for num in NUMS:
            assert_same_outcome(*keys_both(random.split, key, num))
        for data in FOLD_DATA:
            assert_same_outcome(*keys_both(random.fold_in, key, data))


@pytest.mark.parametrize("partitionable", [False, True])
def test_threefry_partitionable(partitionable):
    """split's keys depend on jax_threefry_partitionable; fold_in's do not."""
    with pyjax.threefry_partitionable(partitionable):
        for key in _both_key_kinds(21):
            for num in NUMS:
                assert_same_outcome(*keys_both(random.split, key, num))
            for data in FOLD_DATA:
                assert_same_outcome(*keys_both(random.fold_in, key, data))


# JAX 0.10.2's keys (jax.random.key_data of the same calls)
SPLIT_0 = [[1797259609, 2579123966], [928981903, 3453687069]]
SPLIT_0_ORIGINAL = [[4146024105, 967050713], [2718843009, 1272950319]]
FOLD_IN_0_1 = [928981903, 3453687069]
FOLD_IN_0_MAX = [743310391, 3789761811]


def test_known_keys():
    for key in _both_key_kinds(0):
        data = lambda k: np.asarray(random.key_data(k)).tolist()  # noqa: E731
        assert data(random.split(key)) == SPLIT_0
        assert data(random.fold_in(key, 1)) == FOLD_IN_0_1
        assert data(random.fold_in(key, 2**32 - 1)) == FOLD_IN_0_MAX
        with pyjax.threefry_partitionable(False):
            assert data(random.split(key)) == SPLIT_0_ORIGINAL
            assert data(random.fold_in(key, 1)) == FOLD_IN_0_1


KEY_CASES = {
    # split
    "negative num": (random.split, lambda k: (k, -1)),
    "negative in shape": (random.split, lambda k: (k, (2, -3))),
    "float num": (random.split, lambda k: (k, 2.0)),
    "bool num": (random.split, lambda k: (k, True)),
    "numpy int num": (random.split, lambda k: (k, np.int64(3))),
    "array num": (random.split, lambda k: (k, jnp.asarray(3))),
    "list num": (random.split, lambda k: (k, [2, 2])),
    "float in shape": (random.split, lambda k: (k, (2, 1.0))),
    "huge num": (random.split, lambda k: (k, 2**62)),
    "batched key split": (random.split, lambda k: (random.split(k, 3), 2)),
    # fold_in
    "negative data": (random.fold_in, lambda k: (k, -1)),
    "int32 min data": (random.fold_in, lambda k: (k, -2**31)),
    "2**32 data": (random.fold_in, lambda k: (k, 2**32)),
    "int64 max data": (random.fold_in, lambda k: (k, 2**63 - 1)),
    "2**63 data": (random.fold_in, lambda k: (k, 2**63)),
    "bool data": (random.fold_in, lambda k: (k, True)),
    "float data": (random.fold_in, lambda k: (k, 1.5)),
    "numpy int8 data": (random.fold_in, lambda k: (k, np.int8(-3))),
    "numpy uint64 data": (random.fold_in, lambda k: (k, np.uint64(2**40))),
    "array data": (random.fold_in, lambda k: (k, jnp.asarray(-5))),
    "vector data": (random.fold_in, lambda k: (k, jnp.arange(2))),
    "str data": (random.fold_in, lambda k: (k, "a")),
    "None data": (random.fold_in, lambda k: (k, None)),
    "batched key fold_in": (random.fold_in, lambda k: (random.split(k, 3), 1)),
}
KEYS_OF_OTHER_KINDS = {
    "numpy key": np.zeros(2, np.uint32),
    "list key": [0, 0],
    "int32 key": jnp.zeros(2, jnp.int32),
    "float key": jnp.zeros(2, jnp.float32),
    "key data of 3": jnp.zeros(3, jnp.uint32),
}


@pytest.mark.parametrize("name", list(KEY_CASES))
def test_keys_declined_cases(name):
    fn, args = KEY_CASES[name]
    for key in _both_key_kinds(4):
        assert_same_outcome(*keys_both(fn, *args(key), expect_fast=False))


@pytest.mark.parametrize("name", list(KEYS_OF_OTHER_KINDS))
def test_keys_of_other_kinds(name):
    key = KEYS_OF_OTHER_KINDS[name]
    assert_same_outcome(*keys_both(random.split, key, expect_fast=False))
    assert_same_outcome(*keys_both(random.fold_in, key, 1, expect_fast=False))


def test_keys_options_that_decline():
    for key in _both_key_kinds(2):
        with pyjax.disable_jit():
            assert_same_outcome(*keys_both(random.split, key, 3, expect_fast=False))
            assert_same_outcome(*keys_both(random.fold_in, key, 3, expect_fast=False))
        with pyjax.set_mesh(pyjax.make_mesh((1,), ("x",))):
            assert_same_outcome(*keys_both(random.split, key, 3, expect_fast=False))
            assert_same_outcome(*keys_both(random.fold_in, key, 3, expect_fast=False))
        assert_same_outcome(*keys_both(random.split, key, 3))  # and back


SPLIT_JAXPR = """\
{ lambda ; a:u32[2]. let
    b:key<fry>[] = random_wrap[impl=fry] a
    c:key<fry>[2] = random_split[shape=(2,)] b
    d:u32[2,2] = random_unwrap c
  in (d,) }"""

FOLD_IN_JAXPR = """\
{ lambda ; a:u32[2]. let
    b:key<fry>[] = random_wrap[impl=fry] a
    c:key<fry>[] = random_fold_in b 3:u32[]
    d:u32[2] = random_unwrap c
  in (d,) }"""

TYPED_SPLIT_JAXPR = """\
{ lambda ; a:key<fry>[]. let
    b:key<fry>[2,3] = random_split[shape=(2, 3)] a
  in (b,) }"""


def test_keys_jaxprs_unchanged():
    """JAX 0.10.2's jaxprs (jax.make_jaxpr of the same functions), fast path or not."""
    with KeysSpy() as spy:
        split = str(pyjax.make_jaxpr(random.split)(random.PRNGKey(0)))
        fold_in = str(pyjax.make_jaxpr(lambda k: random.fold_in(k, 3))(random.PRNGKey(0)))
        typed = str(pyjax.make_jaxpr(lambda k: random.split(k, (2, 3)))(random.key(0)))
    assert spy.answered == 0
    assert (split, fold_in, typed) == (SPLIT_JAXPR, FOLD_IN_JAXPR, TYPED_SPLIT_JAXPR)


def test_keys_jit_vmap_grad():
    for key in _both_key_kinds(17):
        with KeysSpy() as spy:
            traced = pyjax.jit(lambda k: random.split(k, (2, 3)))(key)
            folded = pyjax.jit(lambda k: random.fold_in(k, 2**32 - 1))(key)
            keys = random.split(key, 4)  # (eager: answered)
            batched_split = pyjax.vmap(lambda k: random.split(k, 3))(keys)
            batched_fold = pyjax.vmap(lambda k, d: random.fold_in(k, d))(keys, jnp.arange(4))
        assert spy.answered == 1
        assert_same_keys(traced, random.split(key, (2, 3)))
        assert_same_keys(folded, random.fold_in(key, 2**32 - 1))
        for i in range(4):
            assert_same_keys(batched_split[i], random.split(keys[i], 3))
            assert_same_keys(batched_fold[i], random.fold_in(keys[i], i))

    def loss(x, key):
        k1, k2 = random.split(random.fold_in(key, 7))
        return jnp.sum(x * random.normal(k1, (3,)) + random.uniform(k2, (3,)))
    x = jnp.arange(3.)
    for key in _both_key_kinds(5):
        got = pyjax.grad(loss)(x, key)
        with ordinary_keys_path():
            want = pyjax.grad(loss)(x, key)
        assert_same(got, want)


@pytestmark_kernels
def test_pairs_kernel():
    """PAIRS: out[i] is the hash pair of counter (0, start + i), as _hash_block makes it."""
    fn = _kernel(native.PAIRS)
    rng = np.random.default_rng(3)
    for start, size in ((0, 1), (0, 2), (0, 1001), (5, 1), (2**31, 3), (2**32 - 7, 7)):
        key = rng.integers(0, 2**32, 2, dtype=np.uint64).astype(np.uint32)
        out = np.empty((size, 2), np.uint32)
        fn(start, size, native.TWO_POINTERS(key.ctypes.data, out.ctypes.data))
        a, b = np.empty(size, np.uint32), np.empty(size, np.uint32)
        counters = np.arange(start, start + size, dtype=np.uint64).astype(np.uint32)
        prng._hash_block(key[0], key[1], np.zeros((), np.uint32), counters, a, b,
                         np.empty(size, np.uint32))
        np.testing.assert_array_equal(out, np.stack([a, b], axis=1))
