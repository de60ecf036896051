"""Issue 16's eager fast paths against the general paths they shortcut: `x[idx]` (np.take) and
`x.at[idx].<op>(scalar)` (ufunc.at).  Results must be the same Arrays bit for bit: dtype, weak
type, shape and bits, over dtypes, index values (negative, out of range, repeated, empty,
2-D), NaN, signed zeros and subnormals (flushed, as XLA flushes them)."""
import warnings

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src.core import dtypes
from pyjax._src.core.array import ArrayImpl
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
    """The same Array: type, dtype, weak type, shape and bits."""
    assert type(got) is ArrayImpl and type(want) is ArrayImpl, (type(got), type(want))
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
