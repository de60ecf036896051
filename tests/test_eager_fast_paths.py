"""Issue 16's eager fast paths against the general paths they shortcut: `x[idx]` (np.take),
`x.at[idx].<op>(scalar)` (ufunc.at), jnp.dot/matmul/einsum of two arrays (one specialised
dot_general, numpy/fast_products.py), jnp.sin & co of inexact arrays (no promotion) and the
builtin call of tier 1's float32 kernels.  Results must be the same Arrays bit for bit: dtype,
weak type, shape and bits, over dtypes, index values (negative, out of range, repeated, empty,
2-D), NaN, signed zeros and subnormals (flushed, as XLA flushes them)."""
import sys
import warnings

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src.core import dtypes
from pyjax._src.core.array import ArrayImpl
from pyjax._src.numpy import fast_products
from pyjax._src.numpy import indexing as nix
from pyjax._src.primitives import indexing as ix

BF16 = np.dtype(dtypes.bfloat16)
FLOATS = [np.float32, np.float16, BF16, np.complex64]
INTS = [np.int32, np.int8, np.uint8, np.bool_]
#: values of every float kind: signed zeros, NaN, infinities, a float32 subnormal, rounding
SPECIALS = [0.0, -0.0, 1.5, -2.25, np.nan, np.inf, -np.inf, 1e-39, -3e-39, 0.1, 7.0, -1e3]


def _operand(shape, dtype, weak=False):
    """An Array of `shape` filled from SPECIALS (floats) or a small int range, cycled."""
    n = int(np.prod(shape))
    dtype = np.dtype(dtype)
    if dtype.kind in "fcV":
        with np.errstate(all="ignore"):
            flat = np.resize(np.array(SPECIALS), n).astype(dtype)
            if dtype.kind == "c":
                flat = flat + 1j * np.resize(np.array(SPECIALS[::-1]), n).astype(dtype)
    elif dtype == np.bool_:
        flat = np.arange(n) % 3 == 1
    else:
        flat = (np.arange(n) * 7 % 23 - 11).astype(dtype)
    return ArrayImpl(np.ascontiguousarray(flat.reshape(shape)), weak)


def _same(got, want):
    """The same Array: concrete (a jitted result may still be computing), dtype, weak type,
    shape and bits."""
    assert isinstance(got, ArrayImpl) and isinstance(want, ArrayImpl), (type(got), type(want))
    g, w = got._buf, want._buf
    assert (g.dtype, g.shape, got.weak_type) == (w.dtype, w.shape, want.weak_type)
    g, w = g.reshape(-1), w.reshape(-1)
    unsigned = f"u{g.dtype.itemsize}" if g.dtype.itemsize in (1, 2, 4, 8) else None
    if unsigned and g.dtype.kind != "c":
        np.testing.assert_array_equal(g.view(unsigned), w.view(unsigned))
    else:  # complex64: compare each half's bits
        np.testing.assert_array_equal(g.view(np.uint32), w.view(np.uint32))


# ---------------------------------------------------------------------------------------------
# x[idx]
# ---------------------------------------------------------------------------------------------

INDICES = [[0, 3, 5], [-1, -10, 9, 0], [10, -11, 2**31 - 1, -2**31, 4], [2, 2, -8, 2],
           [[1, 2], [-1, 0]], [[12, -3]]]


def _same_or_same_error(fast, general):
    """_same(fast(), general()), or both raise one type of error."""
    try:
        want = general()
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            fast()
        return
    _same(fast(), want)


@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
@pytest.mark.parametrize("shape", [(10,), (10, 3), (1,), (10, 0)], ids=str)
def test_take_rows_matches_gather(dtype, shape):
    """x[idx] (int32 idx) is the gather jnp lowers it to: wrapped negatives, clamped rest."""
    x = _operand(shape, dtype)
    for idx in INDICES:
        i = jnp.asarray(np.array(idx, np.int32))
        _same(x[i], nix.rewriting_take(x, i))
        for key in [(slice(None), i), (Ellipsis, i), (i, Ellipsis)]:
            _same_or_same_error(lambda: x[key], lambda: nix.rewriting_take(x, key))


def test_take_rows_weak_empty_and_jit():
    x = _operand((10,), np.float32, weak=True)
    for idx in INDICES + [np.zeros((0,), np.int32), np.zeros((2, 0), np.int32)]:
        i = jnp.asarray(np.array(idx, np.int32))
        _same(x[i], nix.rewriting_take(x, i))
        _same(x[i], jax.jit(lambda x, i: x[i])(x, i))
    empty = _operand((0,), np.float32)
    i = jnp.asarray(np.array([0, -1], np.int32))
    _same_or_same_error(lambda: empty[i], lambda: nix.rewriting_take(empty, i))


def test_take_rows_int64_indices(x64):
    x = _operand((10, 2), np.float32)
    for idx in INDICES + [[2**40, -2**40, 2**63 - 1, -2**63]]:
        i = jnp.asarray(np.array(idx, np.int64))
        assert i.dtype == np.int64
        _same(x[i], nix.rewriting_take(x, i))


# ---------------------------------------------------------------------------------------------
# x.at[idx].<op>(scalar)
# ---------------------------------------------------------------------------------------------

SCATTERS = {"set": ix.scatter, "add": ix.scatter_add, "subtract": ix.scatter_sub,
            "multiply": ix.scatter_mul, "min": ix.scatter_min, "max": ix.scatter_max}
VALUES = [3, -2, True, 2.5, -0.0, float("nan"), 1e-39, 2**40, 1 - 2j]


def _update_pairs(x, index, op, values=VALUES):
    """(fast path's result, the scatter's) for each value."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # unsafe casts, on both paths
        for value in values:
            try:
                lowered = nix.scatter_update(x, index, value, SCATTERS[op])
            except Exception as e:  # noqa: BLE001 - then the fast path raises it too
                with pytest.raises(type(e)):
                    getattr(x.at[index], op)(value)
                continue
            yield getattr(x.at[index], op)(value), lowered


@pytest.mark.parametrize("op", sorted(SCATTERS))
@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
def test_update_rows_matches_scatter(op, dtype):
    """Updates at int32 index arrays: repeated indices combine in order, negative ones wrap,
    out-of-range ones are dropped (the general path runs for those)."""
    for shape in [(10,), (10, 3)]:
        x = _operand(shape, dtype)
        for idx in INDICES:
            i = jnp.asarray(np.array(idx, np.int32))
            for fast, lowered in _update_pairs(x, i, op):
                _same(fast, lowered)


@pytest.mark.parametrize("op", sorted(SCATTERS))
def test_update_rows_0d_array_values_weak_and_int64(op, x64):
    x = _operand((10,), np.float32, weak=True)
    for idx, dtype in [([1, -1, 1], np.int32), ([3, -10, 9], np.int64), ([2**40, 1], np.int64)]:
        i = jnp.asarray(np.array(idx, dtype))
        values = [jnp.float32(-1.5), jnp.asarray(2.0), jnp.int32(4), 0.5, 7]
        for fast, lowered in _update_pairs(x, i, op, values):
            _same(fast, lowered)


def test_update_with_nothing_to_update_returns_x():
    """As the scatter path, which returns x itself when the update is empty."""
    x = _operand((10,), np.float32)
    assert x.at[jnp.asarray(np.zeros((0,), np.int32))].add(1.0) is x
    assert nix.scatter_update(x, jnp.asarray(np.zeros((0,), np.int32)), 1.0,
                              ix.scatter_add) is x


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "min", "max"])
def test_scalar_updates_flush_subnormals_as_jax(op):
    """XLA's scatter reads a subnormal float32 as zero (x.at[0].add(0.) of 1e-39 is 0, as in
    JAX): the fast paths combine under flushing, at basic indices and index arrays alike."""
    x = jnp.asarray(np.array([1e-39, -2e-39, 3.0], np.float32))
    for index in [0, -2, (slice(None),), jnp.asarray(np.array([0, 1], np.int32))]:
        fast = getattr(x.at[index], op)(0.0 if op != "multiply" else 1.0)
        jitted = jax.jit(lambda x: getattr(x.at[index], op)(0.0 if op != "multiply" else 1.0))
        _same(fast, jitted(x))
    assert not np.asarray(getattr(x.at[:2], op)(0.0 if op != "multiply" else 1.0))[:2].any()


def test_scalar_update_values_key_by_type_and_sign():
    """The converted scalars are cached per value: 0.0 and -0.0, True and 1, stay apart."""
    x = _operand((4,), np.float32)
    i = jnp.asarray(np.array([1], np.int32))
    assert np.signbit(np.asarray(x.at[i].set(-0.0))[1])
    assert not np.signbit(np.asarray(x.at[i].set(0.0))[1])
    y = _operand((4,), np.int32)
    _same(y.at[i].set(True), nix.scatter_update(y, i, True, ix.scatter))
    _same(y.at[i].set(1), nix.scatter_update(y, i, 1, ix.scatter))


# ---------------------------------------------------------------------------------------------
# jnp.dot, jnp.matmul, jnp.einsum
# ---------------------------------------------------------------------------------------------

def _general(fun):
    """The function under fast_product: the usual (eager plan) path."""
    return fun.__wrapped__


def _check_product(fun, *args):
    """Three calls (usual, staged, fast) against the usual path's three (usual, recorded,
    replayed), or the same error from every call."""
    try:
        wants = [_general(fun)(*args) for _ in range(3)]
    except Exception as e:  # noqa: BLE001
        for _ in range(3):
            with pytest.raises(type(e), match=None):
                fun(*args)
        return
    for want in wants:
        _same(fun(*args), want)


PRODUCT_SHAPES = [((10, 10), (10, 10)), ((1, 10), (10, 10)), ((10,), (10,)), ((3, 10), (10,)),
                  ((10,), (10, 4)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (5, 4, 6)),
                  ((0, 3), (3, 2)), ((3, 0), (0, 2)), ((1, 1), (1, 1)), ((3,), (4,)),
                  ((64, 256), (256, 256)), ((2, 5000), (5000, 2))]


@pytest.mark.parametrize("fun", [jnp.dot, jnp.matmul], ids=["dot", "matmul"])
@pytest.mark.parametrize("dtype", FLOATS + INTS, ids=str)
def test_products_match_the_usual_path(fun, dtype):
    for xs, ys in PRODUCT_SHAPES:
        if dtype != np.float32 and np.prod(xs) * np.prod(ys) > 10**5:
            continue
        _check_product(fun, _operand(xs, dtype), _operand(ys, dtype))


@pytest.mark.parametrize("fun", [jnp.dot, jnp.matmul], ids=["dot", "matmul"])
def test_products_of_mixed_and_weak_types(fun):
    a, w = _operand((3, 10), np.float32), _operand((10, 10), np.float32, weak=True)
    for x, y in [(a, w), (w, a[:, :10].T), (w, w), (a, _operand((10, 4), np.int32)),
                 (_operand((3, 10), BF16), _operand((10, 2), np.float16)),
                 (_operand((3, 10), np.int8), _operand((10, 2), np.uint8)),
                 (_operand((3, 10), np.bool_), _operand((10, 2), np.int32)),
                 (a[:, ::2], _operand((5, 3), np.float32)), (a.T, a)]:
        _check_product(fun, x, y)
    _check_product(fun, w, w)  # one Array passed twice


def test_products_with_x64(x64):
    a, b = _operand((4, 6), np.float64), _operand((6, 3), np.float32)
    for x, y in [(a, a.T), (a, b), (b.T, _operand((4, 5), np.int64)),
                 (_operand((4, 6), np.complex128), a.T)]:
        _check_product(jnp.dot, x, y)
        _check_product(jnp.matmul, x, y)


def test_products_follow_the_precision_config():
    a, b = _operand((4, 6), np.float32), _operand((6, 3), np.float32)
    for precision in ["F32_F32_F32", "highest", "BF16_BF16_F32"]:
        with jax.default_matmul_precision(precision):
            _check_product(jnp.dot, a, b)
            _check_product(jnp.matmul, a, b)


def test_batched_matmul():
    for xs, ys in [((2, 3, 4), (2, 4, 5)), ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2))]:
        _check_product(jnp.matmul, _operand(xs, np.float32), _operand(ys, np.float32))


EINSUMS = [("ij,jk->ik", (3, 4), (4, 5)), ("ij,kj->ki", (3, 4), (5, 4)),
           ("ij,jk->ki", (3, 4), (4, 5)), ("i,i->", (7,), (7,)),
           ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)), ("ij,ij->ij", (3, 4), (3, 4)),
           ("ij,jk", (3, 4), (4, 5)), ("ii,ij->j", (3, 3), (3, 2)), ("ij,kl->ijkl", (2, 3), (4, 1))]


@pytest.mark.parametrize("spec,xs,ys", EINSUMS, ids=[e[0] for e in EINSUMS])
@pytest.mark.parametrize("dtype", [np.float32, BF16, np.int32, np.complex64], ids=str)
def test_einsum_matches_the_usual_path(spec, xs, ys, dtype):
    x, y = _operand(xs, dtype), _operand(ys, dtype)
    wants = [_general(jnp.einsum)(spec, x, y) for _ in range(3)]
    for want in wants:
        _same(jnp.einsum(spec, x, y), want)


def test_products_stage_once_and_decline_what_is_not_one_dot_general():
    """The second call of a signature stages it; dot_general alone is taken directly."""
    fast_products._steps.clear()
    a, b = _operand((3, 4), np.float32), _operand((4, 5), np.float32)
    jnp.matmul(a, b)
    assert list(fast_products._steps.values()) == [fast_products._SEEN]
    jnp.matmul(a, b)
    (step,) = fast_products._steps.values()
    assert step[0] is np.dot._implementation and step[1:] == (False, np.float32, False)
    jnp.einsum("ij,jk->ki", a, b)
    jnp.einsum("ij,jk->ki", a, b)  # one dot_general, its operands swapped
    assert fast_products._steps[next(reversed(fast_products._steps))][1] is True
    c = _operand((4, 4), np.float32)
    jnp.einsum("ii,ij->j", c, b)
    jnp.einsum("ii,ij->j", c, b)  # a diagonal first: the usual path
    assert fast_products._steps[next(reversed(fast_products._steps))] is False


def test_products_of_tracers_and_keywords_take_the_usual_path():
    a, b = _operand((3, 4), np.float32), _operand((4, 5), np.float32)
    jaxpr = jax.make_jaxpr(jnp.dot)(a, b)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["dot_general"]
    for _ in range(3):
        _same(jnp.dot(a, b, precision="highest"), _general(jnp.dot)(a, b, precision="highest"))
        _same(jnp.dot(a, b, preferred_element_type=np.float32),
              _general(jnp.dot)(a, b, preferred_element_type=np.float32))
    _same(jax.jit(jnp.matmul)(a, b), jnp.matmul(a, b))


def test_product_errors_repeat():
    a, b = _operand((3,), np.float32), _operand((4,), np.float32)
    for _ in range(3):
        with pytest.raises(TypeError, match="dot_general requires contracting dimensions"):
            jnp.dot(a, b)


# ---------------------------------------------------------------------------------------------
# jnp.sin & co, and the builtin call of tier 1's kernels
# ---------------------------------------------------------------------------------------------

UNARY = ["sin", "cos", "exp", "log", "tanh", "sqrt", "arctan", "expm1", "log1p"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_inexact_unary_matches_the_promoting_path(name, dtype):
    """An inexact Array goes to lax as it is: what promote_args_inexact would give."""
    from pyjax._src.numpy.util import promote_args_inexact
    fn, lax_fn = getattr(jnp, name), getattr(jax.lax, {"arctan": "atan"}.get(name, name))
    for x in [_operand((13,), dtype), _operand((2, 3), dtype),
              _operand((5,), dtype, weak=np.dtype(dtype) in (np.float32, np.complex64))]:
        with np.errstate(all="ignore"):
            _same(fn(x), lax_fn(*promote_args_inexact(name, x)))
    if name not in ("exp", "log"):  # (eager, these alone differ from the fused: libm's)
        x = _operand((2, 3), dtype)
        _same(fn(x), jax.jit(fn)(x))


def test_inexact_unary_of_other_operands():
    for x in [_operand((4,), np.int32), _operand((4,), np.bool_), 2, 1.5]:
        assert jnp.sin(x).dtype == np.float32


@pytest.mark.parametrize("name", ["sin", "exp", "log", "tanh"])
def test_kernel_builtin_matches_ctypes(name):
    """tier 1's float32 kernels called through the machine-code builtin (small arrays) give
    the ctypes call's bits, and the result is an ordinary, owned array."""
    from pyjax._src.backend import tier1
    from pyjax._src.backend.tier1 import xla_math as t1
    if t1.evaluate(name, np.ones(3, np.float32)) is None:
        tier1.wait()
    if t1.evaluate(name, np.ones(3, np.float32)) is None:
        pytest.skip("tier 1 does not run here")
    call, builtin = t1._calls[name]
    if builtin is None:
        pytest.skip("no machine-code builtins here")
    rng = np.random.default_rng(0)
    for shape in [(), (0,), (1,), (7,), (3, 5), (2, 0, 3), (t1._BUILTIN_MAX,),
                  (t1._BUILTIN_MAX + 1,)]:
        x = (rng.standard_normal(shape) * 30).astype(np.float32)
        got = t1.evaluate(name, x)
        want = np.empty(x.shape, np.float32)
        call(np.asarray(x).ctypes.data, want.ctypes.data, x.size)
        assert got.shape == x.shape and got.dtype == np.float32 and got.flags.owndata
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
        assert sys.getrefcount(got) == 2  # the builtin returned one new reference
    strided = (rng.standard_normal((6, 4)) * 30).astype(np.float32)[::2, ::3]
    np.testing.assert_array_equal(t1.evaluate(name, strided),
                                  t1.evaluate(name, np.ascontiguousarray(strided)))
