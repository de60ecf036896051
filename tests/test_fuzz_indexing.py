"""Fuzz: basic and advanced indexing (ints, slices with negative steps, None, Ellipsis, bool
masks, integer arrays with negative and out-of-bounds entries), `.at[].get/set/add/mul/min/max`
with every mode, take and take_along_axis, eagerly and under jit, against NumPy.  Out-of-bounds
indices follow KNOWN_DIFFERENCES (clamped retrieval, dropped or clamped updates, filled take);
the only errors are JAX's: IndexError for too many indices / a non-concrete bool mask under jit,
TypeError for a float index."""
from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import pyjax.numpy as jnp
from fuzz_strategies import (X32, arrays, assert_values, fuzz_settings, np_dtype, run_both,
                             same_bits)


@st.composite
def indices(draw: Any, shape: tuple[int, ...]) -> tuple:
    """An index for an array of `shape`: one entry per leading axis (fewer is allowed)."""
    out: list = []
    ellipsis = False
    for d in range(draw(st.integers(0, len(shape)))):
        n = shape[d]
        choice = draw(st.integers(0, 6))
        if choice == 0 and n:
            out.append(draw(st.integers(-n - 2, n + 1)))
        elif choice == 1:
            out.append(slice(draw(st.none() | st.integers(-6, 6)),
                             draw(st.none() | st.integers(-6, 6)),
                             draw(st.none() | st.sampled_from([1, -1, 2, -2, 3]))))
        elif choice == 2:
            out.append(None)
        elif choice == 3 and not ellipsis:
            out.append(Ellipsis)
            ellipsis = True
            break
        elif choice == 4 and n:
            out.append(np.array(draw(st.lists(st.integers(-n - 2, n + 1), max_size=3)),
                                np.int32))
        else:
            out.append(slice(None))
    return tuple(out)


def _normalise(idx: tuple, shape: tuple[int, ...]) -> tuple:
    """KNOWN_DIFFERENCES['out_of_bounds_index_clamps']: JAX clamps integer indices."""
    out, axis = [], 0
    for i in idx:
        if i is None:
            out.append(i)
            continue
        if i is Ellipsis:  # always the last entry drawn
            out.append(i)
            break
        n = shape[axis]
        if isinstance(i, (int, np.ndarray)):
            arr = np.asarray(i)
            arr = np.clip(np.where(arr < 0, arr + n, arr), 0, n - 1)
            out.append(int(arr) if isinstance(i, int) else arr)
        else:
            out.append(i)
        axis += 1
    return tuple(out)


@fuzz_settings(120)
@given(st.data())
def test_getitem(data):
    kind = data.draw(st.sampled_from(X32))
    x = data.draw(arrays(kind))
    idx = data.draw(indices(x.shape))
    if x.shape and data.draw(st.integers(0, 7)) == 0:
        mask = data.draw(arrays("bool", x.shape))
        eager, jitted, e_err, j_err = run_both(lambda a: jnp.asarray(a)[mask], x)
        assert e_err is None and j_err is None
        assert_values(eager, x[mask], what="bool mask")
        same_bits(eager, jitted)
        # a traced mask has no concrete shape: KNOWN_DIFFERENCES['bool_mask_needs_concrete...']
        _, _, _, err = run_both(lambda a, m: jnp.asarray(a)[m], x, mask)
        assert type(err).__name__ == "NonConcreteBooleanIndexError" and isinstance(err,
                                                                                   IndexError)
        return
    if any(np.ndim(i) and np.size(i) == 0 for i in idx):
        return  # empty integer arrays: NumPy and JAX agree, but skip NumPy's shape quirks
    eager, jitted, e_err, j_err = run_both(lambda a: jnp.asarray(a)[idx], x)
    try:
        want = x[_normalise(idx, x.shape)]
    except IndexError:
        assert type(e_err) is IndexError and type(j_err) is IndexError, (idx, e_err, j_err)
        return
    assert e_err is None and j_err is None, (idx, x.shape, e_err, j_err)
    assert eager.dtype == x.dtype and not eager.weak_type
    assert_values(eager, want, what=f"x[{idx}]")
    same_bits(eager, jitted, f"x[{idx}]")


UPDATES = {"set": None, "add": np.add, "mul": np.multiply, "min": np.minimum,
           "max": np.maximum}


@fuzz_settings(120)
@given(st.data())
def test_at(data):
    """x.at[i].op(v, mode=...) for a 1-d integer-array index i (unique, possibly negative or
    out of bounds) along a random axis."""
    kind = data.draw(st.sampled_from(X32))
    x = data.draw(arrays(kind, data.draw(st.lists(st.integers(1, 4), min_size=1,
                                                  max_size=3).map(tuple))))
    axis = data.draw(st.integers(0, x.ndim - 1))
    n = x.shape[axis]
    raw = data.draw(st.lists(st.integers(-n - 2, n + 1), max_size=4))
    uniq: list[int] = []
    for i in raw:  # unique positions, so NumPy's order of duplicate updates cannot matter
        if (i % n if -n <= i < n else ("oob", i)) not in [j % n if -n <= j < n else ("oob", j)
                                                           for j in uniq]:
            uniq.append(i)
    idx = (slice(None),) * axis + (np.array(uniq, np.int32),)
    method = data.draw(st.sampled_from(["get"] + list(UPDATES)))
    mode = data.draw(st.sampled_from([None, "clip", "drop", "fill", "promise_in_bounds"]))
    inb = np.array([-n <= i < n for i in uniq], bool)
    if mode == "promise_in_bounds" and not inb.all():
        mode = None  # out-of-bounds results are unspecified under this promise
    kw = {} if mode is None else {"mode": mode}
    pos = np.array([i % n if -n <= i < n else (0 if i < 0 else n - 1) for i in uniq], np.int64)
    if method == "get":
        eager, jitted, e_err, j_err = run_both(lambda a: jnp.asarray(a).at[idx].get(**kw), x)
        assert e_err is None and j_err is None, (e_err, j_err)
        want = np.take(x, pos, axis=axis)
        if mode in ("fill", "drop") and not inb.all():  # KNOWN_DIFFERENCES[...take_fills']
            fill = _fill_value(x.dtype)
            shape = [1] * x.ndim
            shape[axis] = len(uniq)
            want = np.where(inb.reshape(shape), want, fill).astype(x.dtype)
    else:
        values = data.draw(arrays(kind, np.take(x, pos, axis=axis).shape))
        eager, jitted, e_err, j_err = run_both(
            lambda a, v: getattr(jnp.asarray(a).at[idx], method)(v, **kw), x, values)
        if kind == "bool" and method in ("add", "mul") and uniq:
            # lax.add/mul reject bool, as in JAX (with no index at all JAX returns x unchecked)
            assert type(e_err) is TypeError and type(j_err) is TypeError, (e_err, j_err)
            return
        assert e_err is None and j_err is None, (e_err, j_err)
        keep = np.ones(len(uniq), bool) if mode == "clip" else inb
        # KNOWN_DIFFERENCES['out_of_bounds_scatter_drops']: clamped with 'clip', else dropped
        want = x.copy()
        sel = (slice(None),) * axis + (pos[keep],)
        vals = np.take(values, np.flatnonzero(keep), axis=axis)
        if len(np.unique(pos[keep])) != keep.sum():
            return  # clamping made positions collide: the order of updates is unspecified
        with np.errstate(all="ignore"):
            if UPDATES[method] is None:
                want[sel] = vals
            else:
                want[sel] = _combine(UPDATES[method], want[sel], vals)
    assert eager.dtype == x.dtype
    assert_values(eager, want, what=f"at[{idx}].{method} {kw}")
    same_bits(eager, jitted, f"at.{method}")


def _combine(ufunc: Any, old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """The update in the operand's dtype (add/mul on float64/complex128 copies)."""
    if ufunc in (np.minimum, np.maximum) or old.dtype.kind in "iub":
        return ufunc(old, new).astype(old.dtype)
    wide_type = np.complex128 if old.dtype.kind == "c" else np.float64
    return ufunc(old.astype(wide_type), new.astype(wide_type)).astype(old.dtype)


def _fill_value(dtype: np.dtype) -> Any:
    if dtype.kind in "fc" or dtype == np_dtype("bfloat16"):
        return np.nan
    if dtype == np.bool_:
        return True
    info = np.iinfo(dtype)
    return info.max if dtype.kind == "u" else info.min


@fuzz_settings(80)
@given(st.data())
def test_take(data):
    kind = data.draw(st.sampled_from(X32))
    x = data.draw(arrays(kind, data.draw(st.lists(st.integers(1, 4), min_size=1,
                                                  max_size=3).map(tuple))))
    axis = data.draw(st.none() | st.integers(-x.ndim, x.ndim - 1))
    n = x.size if axis is None else x.shape[axis]
    ind = np.array(data.draw(st.lists(st.integers(-n - 2, n + 1), max_size=4)), np.int32)
    mode = data.draw(st.sampled_from([None, "clip", "wrap", "fill"]))
    eager, jitted, e_err, j_err = run_both(lambda a, i: jnp.take(a, i, axis=axis, mode=mode),
                                           x, ind)
    assert e_err is None and j_err is None, (e_err, j_err)
    if mode in ("clip", "wrap"):
        want = np.take(x, ind, axis=axis, mode=mode)
    else:  # KNOWN_DIFFERENCES['out_of_bounds_take_fills']
        inb = (ind >= -n) & (ind < n)
        want = np.take(x, np.where(inb, ind, 0), axis=axis)
        shape = [1] * want.ndim
        if axis is None:
            shape = list(inb.shape)
        else:
            shape[axis % x.ndim] = len(ind)
        want = np.where(inb.reshape(shape), want, _fill_value(x.dtype)).astype(x.dtype)
    assert_values(eager, want, what=f"take {axis} {mode}")
    same_bits(eager, jitted)
    # take_along_axis with the same indices along `axis`
    if axis is not None:
        shape = list(x.shape)
        shape[axis] = len(ind)
        full = np.broadcast_to(ind.reshape([-1 if d == axis % x.ndim else 1
                                            for d in range(x.ndim)]), shape)
        eager, jitted, e_err, j_err = run_both(
            lambda a, i: jnp.take_along_axis(a, i, axis=axis), x, full)
        assert e_err is None and j_err is None, (e_err, j_err)
        inb = (full >= -n) & (full < n)
        want = np.take_along_axis(x, np.where(inb, full, 0), axis=axis)
        want = np.where(inb, want, _fill_value(x.dtype)).astype(x.dtype)
        assert_values(eager, want, what=f"take_along_axis {axis}")
        same_bits(eager, jitted)
