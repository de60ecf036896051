"""Indexing: x[idx], x.at[idx].<op>, take/take_along_axis and the lax gather/scatter/dynamic
slice family.

Values are checked against NumPy (JAX's semantics are NumPy's for in-bounds indices; out of
bounds, static ints and gathers clamp, scatters drop), jit against eager, the eager fast paths
against the general lowering, and the staged programs against the jaxprs and errors recorded
from JAX 0.10.2 (tests/data).
"""
import json
import os
import sys
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

import pyjax as jax
import pyjax.lax as _lax
import pyjax.numpy as _jnp
from pyjax import errors
from pyjax._src.numpy import indexing as nix
from pyjax._src.primitives import indexing as ix

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "oracle"))
import cases  # noqa: E402


class _WithFallback:
    """A public module whose names missing so far (exports the lead adds) come from the
    implementing module instead."""

    def __init__(self, public, implementation):
        self._public, self._implementation = public, implementation

    def __getattr__(self, name):
        try:
            return getattr(self._public, name)
        except AttributeError:
            return getattr(self._implementation, name)


lax = _WithFallback(_lax, ix)
jnp = _WithFallback(_jnp, nix)


def _records(path):
    with open(os.path.join(HERE, "data", path)) as f:
        return {(r["name"], r["x64"]): r for r in json.load(f)["records"]}


JAXPRS = _records("jaxprs.json")
ERRORS = _records("errors.json")

#: recorded jaxpr cases produced by this layer
OWNED_PREFIXES = ("index_", "at_", "x64_index_", "x64_at_")
OWNED = {"lax_slice_in_dim", "lax_index_in_dim", "lax_dynamic_slice",
         "lax_dynamic_slice_const_idx", "lax_dynamic_update_slice", "lax_dynamic_index_in_dim",
         "lax_gather_via_index"}


def _owned(name):
    return name.startswith(OWNED_PREFIXES) or name in OWNED


def _check_same(got, want):
    """Same shape, dtype and values (NaNs equal)."""
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------------------------------------
# Recorded jaxprs and errors
# ---------------------------------------------------------------------------------------------

def _jaxpr_params(x64):
    built = cases.jaxpr_cases(jax, jnp, lax, np, x64=x64)
    return [pytest.param(fn, args, kw, id=name) for name, fn, args, kw in built if _owned(name)]


def _check_record(request, fn, args, kwargs, x64):
    name = request.node.callspec.id
    record = JAXPRS[(name, x64)]
    if "error" in record:
        with pytest.raises(Exception) as info:
            jax.make_jaxpr(fn, **kwargs)(*args)
        assert type(info.value).__name__ == record["error"]["type"]
        assert str(info.value) == record["error"]["message"]
    else:
        assert str(jax.make_jaxpr(fn, **kwargs)(*args)) == record["jaxpr"]


@pytest.mark.parametrize("fn,args,kwargs", _jaxpr_params(False))
def test_recorded_jaxpr(request, fn, args, kwargs):
    _check_record(request, fn, args, kwargs, False)


@pytest.mark.parametrize("fn,args,kwargs", _jaxpr_params(True))
def test_recorded_jaxpr_x64(request, fn, args, kwargs, x64):
    _check_record(request, fn, args, kwargs, True)


def test_all_owned_records_are_covered():
    names = {n for n, _ in JAXPRS if _owned(n)}
    built = {n for n, *_ in cases.jaxpr_cases(jax, jnp, lax, np)} | \
        {n for n, *_ in cases.jaxpr_cases(jax, jnp, lax, np, x64=True)}
    assert names <= built
    assert len(names) >= 40


ERROR_CASES = ["index_oob_clamps", "index_oob_neg_clamps", "index_too_many", "index_float",
               "index_array_oob", "at_set_oob_dropped", "at_get_oob_fill",
               "tracer_slice_with_tracer"]


@pytest.mark.parametrize("name", ERROR_CASES)
def test_recorded_errors(name):
    thunk = dict(cases.error_cases(jax, jnp, lax, np))[name]
    record = ERRORS[(name, False)]
    if not record["raised"]:
        assert repr(thunk()) == record["result"]
        return
    with pytest.raises(Exception) as info:
        thunk()
    assert type(info.value).__name__ == record["type"]
    assert str(info.value) == record["message"]


def test_nonconcrete_boolean_index():
    thunk = dict(cases.error_cases(jax, jnp, lax, np))["tracer_nonconcrete_boolean_index"]
    with pytest.raises(errors.NonConcreteBooleanIndexError) as info:
        thunk()
    assert isinstance(info.value, IndexError)
    assert "Array boolean indices must be concrete" in str(info.value)
    assert "bool[3]" in str(info.value)


def test_index_errors():
    x = jnp.ones((2, 3))
    with pytest.raises(TypeError, match="non-tuple sequence.*arr\\[array\\(seq\\)\\]"):
        x[[0, 1]]
    with pytest.raises(TypeError, match="arr\\[tuple\\(seq\\)\\]"):
        x[[0, slice(None)]]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(TypeError, match="string indexing"):
        x["a"]
    with pytest.raises(TypeError, match="got indexer with type float32"):
        x[np.float32(1)]
    with pytest.raises(TypeError, match="got indexer with type float32"):
        x[jnp.zeros(2)]
    with pytest.raises(IndexError, match="only integers, slices"):
        x[object()]
    with pytest.raises(IndexError, match="boolean index did not match shape"):
        x[np.array([True, False, True])]
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0"):
        jnp.zeros((0, 3))[0]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        x[::0]
    with pytest.raises(ValueError, match="must be a scalar"):
        x.at[0].get(mode="fill", fill_value=np.ones(2))
    with pytest.raises(ValueError, match='Unknown gather mode "bad"'):
        x.at[0].set(2.0, mode="bad")
    with pytest.raises(ValueError, match="Incompatible types for broadcasting"):
        x.at[0:2].set(jnp.ones(4))


# ---------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
dtypes_ = st.sampled_from([np.float32, np.int32])


def _operand(shape, dtype):
    return (np.arange(int(np.prod(shape))).reshape(shape) * 3 - 5).astype(dtype)


@st.composite
def index_specs(draw, shape, arrays=True, masks=True, unique=False):
    """A random index for `shape`: a list of components (ints, slices, None, Ellipsis, int
    arrays broadcastable together, at most one boolean mask), in NumPy form."""
    kinds = ["int", "slice", "full"] + (["array"] if arrays else []) + \
        (["mask"] if masks else [])
    adv_shape = draw(st.sampled_from([(), (2,), (1, 2), (2, 1)]))
    comps, used_mask, used_array = [], False, False
    for n in shape:
        kind = draw(st.sampled_from(kinds))
        if kind == "mask" and (used_mask or used_array):
            kind = "slice"
        if kind == "array" and used_mask and adv_shape:
            kind = "int"
        if kind == "array" and unique and used_array:
            kind = "int"
        if kind == "int":
            comps.append(draw(st.integers(-n, n - 1)))
        elif kind == "full":
            comps.append(slice(None))
        elif kind == "slice":
            bound = st.none() | st.integers(-n - 2, n + 2)
            step = st.none() | st.integers(-3, 3).filter(bool)
            comps.append(slice(draw(bound), draw(bound), draw(step)))
        elif kind == "array":
            used_array = True
            if unique:
                size = draw(st.integers(1, n))
                values = draw(st.lists(st.integers(-n, n - 1), min_size=size, max_size=size,
                                       unique_by=lambda v: v % n))
                comps.append(np.array(values, np.int32))
            else:
                count = int(np.prod(adv_shape))
                values = draw(st.lists(st.integers(-n, n - 1), min_size=count, max_size=count))
                comps.append(np.array(values, np.int32).reshape(adv_shape))
        else:
            used_mask = True
            comps.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))))
    cut = draw(st.integers(0, len(comps)))
    if draw(st.booleans()):
        comps = comps[:cut]
    elif draw(st.booleans()):
        end = draw(st.integers(cut, len(comps)))
        comps = comps[:cut] + [Ellipsis] + comps[end:]
    for _ in range(draw(st.integers(0, 2))):
        comps.insert(draw(st.integers(0, len(comps))), None)
    return comps


def _pyjax_form(draw, comps):
    """The same index with its arrays as NumPy arrays, pyjax arrays or lists."""
    out = []
    for c in comps:
        if isinstance(c, np.ndarray) and c.ndim:
            form = draw(st.sampled_from(["np", "jnp", "list"]))
            out.append(c if form == "np" else jnp.asarray(c) if form == "jnp" else c.tolist())
        else:
            out.append(c)
    return out


def _key(comps):
    return comps[0] if len(comps) == 1 and not isinstance(comps[0], list) else tuple(comps)


# ---------------------------------------------------------------------------------------------
# x[idx]
# ---------------------------------------------------------------------------------------------

@given(st.data(), shapes, dtypes_)
def test_getitem_matches_numpy(data, shape, dtype):
    x = _operand(shape, dtype)
    comps = data.draw(index_specs(shape))
    want = x[tuple(comps)]
    got = jnp.asarray(x)[_key(_pyjax_form(data.draw, comps))]
    _check_same(got, want)


@given(st.data(), shapes)
def test_getitem_out_of_range_static_ints_clamp(data, shape):
    x = _operand(shape, np.float32)
    ints = [data.draw(st.integers(-3 * n, 3 * n)) for n in shape]
    clamped = tuple(min(max(i + n if i < 0 else i, 0), n - 1) for i, n in zip(ints, shape))
    _check_same(jnp.asarray(x)[tuple(ints)], x[clamped])
    _check_same(nix.rewriting_take(jnp.asarray(x), tuple(ints)), x[clamped])


@given(st.data(), shapes, dtypes_, st.booleans())
def test_fast_path_matches_lowering(data, shape, dtype, weak):
    """The NumPy fast path of concrete arrays gives what the slice/dynamic_slice/gather
    lowering gives, out-of-range ints included."""
    buf = _operand(shape, dtype)
    comps = data.draw(index_specs(shape, arrays=False, masks=False))
    comps = [data.draw(st.integers(-2 * n - 1, 2 * n)) if isinstance(c, int) and
             data.draw(st.booleans()) else c for c, n in zip(comps, shape + (1,) * len(comps))]
    x = jnp.asarray(buf)
    if weak:
        x = x + (1 if dtype == np.int32 else 1.0) * 0
    key = _key(comps)
    fast, lowered = x[key], nix.rewriting_take(x, key)
    _check_same(fast, np.asarray(lowered))
    assert fast.weak_type == lowered.weak_type == x.weak_type


def test_fast_path_take_matches_lowering():
    x = jnp.asarray(_operand((3, 4), np.float32))
    for key in [np.array([0, -1, 7, -9]), (slice(None), jnp.array([[3, -4], [9, 0]])),
                (Ellipsis, np.array([1, 2]))]:
        _check_same(x[key], np.asarray(nix.rewriting_take(x, key)))


@given(st.data(), shapes)
def test_getitem_jit_matches_eager(data, shape):
    x = _operand(shape, np.float32)
    comps = data.draw(index_specs(shape))
    traced = [i for i, c in enumerate(comps)
              if isinstance(c, np.ndarray) and c.dtype != np.bool_ or
              (isinstance(c, int) and not isinstance(c, bool) and data.draw(st.booleans()))]
    args = [np.asarray(comps[i], np.int32) for i in traced]

    def f(x, *arrays):
        key = list(comps)
        for i, a in zip(traced, arrays):
            key[i] = a
        return x[_key(key)]

    want = x[tuple(comps)]
    _check_same(jax.jit(f)(x, *args), want)
    _check_same(f(jnp.asarray(x), *[jnp.asarray(a) for a in args]), want)


def test_getitem_weak_type_and_dtype_preserved():
    assert jnp.ones(3, jnp.float32)[0].weak_type is False
    weak = jnp.asarray([1.0, 2.0]) * 1.0
    for key in [0, np.array([1, 0]), slice(None, None, -1), None]:
        assert weak[key].weak_type == weak.weak_type
    b = jnp.asarray(np.array([True, False, True]))
    _check_same(b[np.array([2, 0])], np.array([True, True]))


def test_traced_scalar_bool_and_empty_results():
    x = _operand((2, 3), np.float32)
    _check_same(jax.jit(lambda x: x[True])(x), x[True])
    _check_same(jax.jit(lambda x: x[False])(x), x[False])
    _check_same(jnp.asarray(x)[np.zeros(0, np.int32)], x[np.zeros(0, np.int32)])
    _check_same(jnp.asarray(x)[1:1], x[1:1])


def test_getitem_traced_mask_raises():
    with pytest.raises(errors.NonConcreteBooleanIndexError):
        jax.jit(lambda x, m: x[m])(np.ones(3, np.float32), np.array([True, False, True]))


# ---------------------------------------------------------------------------------------------
# x.at[idx].<op>
# ---------------------------------------------------------------------------------------------

def _values(data, target_shape, dtype):
    shape = data.draw(st.sampled_from([(), target_shape, target_shape[1:]]))
    count = int(np.prod(shape))
    vals = data.draw(st.lists(st.integers(-9, 9), min_size=count, max_size=count))
    return np.array(vals, dtype).reshape(shape)


def _numpy_selection(x: np.ndarray, key: tuple) -> np.ndarray:
    """x[key] in NumPy; drop the example when NumPy itself rejects the drawn index (e.g. a mask
    whose count of True does not broadcast with an integer-array index)."""
    try:
        return x[key]
    except IndexError:
        assume(False)


@given(st.data(), shapes, dtypes_)
def test_at_set_matches_numpy(data, shape, dtype):
    x = _operand(shape, dtype)
    comps = data.draw(index_specs(shape, unique=True))
    key = tuple(comps)
    values = _values(data, _numpy_selection(x, key).shape, dtype)
    want = x.copy()
    want[key] = values
    got = jnp.asarray(x).at[_key(_pyjax_form(data.draw, comps))].set(values)
    _check_same(got, want)


_UFUNCS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
           "min": np.minimum, "max": np.maximum}


@given(st.data(), shapes, st.sampled_from(sorted(_UFUNCS)))
def test_at_combining_ops_match_ufunc_at(data, shape, op):
    """Repeated indices accumulate, as with NumPy's ufunc.at."""
    x = _operand(shape, np.int32)
    comps = data.draw(index_specs(shape))
    key = tuple(comps)
    values = _values(data, _numpy_selection(x, key).shape, np.int32)
    want = x.copy()
    _UFUNCS[op].at(want, key, values)
    got = getattr(jnp.asarray(x).at[_key(_pyjax_form(data.draw, comps))], op)(values)
    _check_same(got, want)


@given(st.data(), shapes)
def test_at_updates_jit_match_eager(data, shape):
    x = _operand(shape, np.float32)
    comps = data.draw(index_specs(shape, masks=False))
    key = tuple(comps)
    values = _values(data, _numpy_selection(x, key).shape, np.float32)
    traced = [i for i, c in enumerate(comps) if isinstance(c, np.ndarray)]

    def f(x, v, *arrays):
        k = list(comps)
        for i, a in zip(traced, arrays):
            k[i] = a
        return x.at[_key(k)].add(v), x.at[_key(k)].max(v)

    args = [comps[i] for i in traced]
    jitted = jax.jit(f)(x, values, *args)
    eager = f(jnp.asarray(x), jnp.asarray(values), *[jnp.asarray(a) for a in args])
    for j, e in zip(jitted, eager):
        _check_same(j, np.asarray(e))
    want = x.copy()
    np.add.at(want, key, values)
    _check_same(jitted[0], want)


@given(st.data(), shapes, st.sampled_from(["set", "add", "subtract", "multiply", "min", "max"]))
def test_at_fast_path_matches_scatter(data, shape, op):
    """The NumPy fast path of scalar updates at basic indices equals the scatter lowering."""
    x = jnp.asarray(_operand(shape, data.draw(dtypes_)))
    comps = data.draw(index_specs(shape, arrays=False, masks=False))
    comps = [data.draw(st.integers(-2 * n - 1, 2 * n)) if isinstance(c, int) else c
             for c, n in zip(comps, shape + (1,) * len(comps))]
    value = data.draw(st.sampled_from([3, -2, True, 2.5, jnp.int32(4), jnp.float32(-1.5)]))
    key = _key(comps)
    scatter_op = {"set": ix.scatter, "add": ix.scatter_add, "subtract": ix.scatter_sub,
                  "multiply": ix.scatter_mul, "min": ix.scatter_min, "max": ix.scatter_max}[op]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        fast = getattr(x.at[key], op)(value)
        lowered = nix.scatter_update(x, key, value, scatter_op)
    _check_same(fast, np.asarray(lowered))
    assert fast.weak_type == lowered.weak_type


def test_at_out_of_bounds_modes():
    x = np.arange(5.0, dtype=np.float32)
    idx = np.array([-7, 7, -1, 1])
    # default mode drops out-of-bound updates, 'clip' clamps them
    _check_same(jnp.asarray(x).at[idx].set(9.0), np.array([0, 9, 2, 3, 9], np.float32))
    _check_same(jnp.asarray(x).at[idx].add(1.0, mode="clip"),
                np.array([1, 2, 2, 3, 6], np.float32))
    _check_same(jnp.asarray(x).at[7].add(1.0), x)
    # gathers clamp by default, fill in 'fill' mode
    _check_same(jnp.asarray(x)[idx], np.array([0, 4, 4, 1], np.float32))
    _check_same(jnp.asarray(x).at[idx].get(mode="fill", fill_value=-1.0),
                np.array([-1, -1, 4, 1], np.float32))
    _check_same(jnp.asarray(x).at[idx].get(mode="fill"), np.array([np.nan, np.nan, 4, 1],
                                                                  np.float32))
    ints = jnp.arange(5)
    _check_same(ints.at[idx].get(mode="fill"),
                np.array([-2 ** 31, -2 ** 31, 4, 1], np.int32))
    _check_same(jax.jit(lambda x, i: x.at[i].get(mode="fill", fill_value=-1))(x, idx),
                np.array([-1, -1, 4, 1], np.float32))
    _check_same(jax.jit(lambda x, i: x.at[i].set(9.0))(x, idx),
                np.array([0, 9, 2, 3, 9], np.float32))


def test_at_divide_power_apply_and_promotion():
    x = np.arange(1.0, 6.0, dtype=np.float32)
    idx = np.array([1, 1, 3])
    want = x.copy()
    np.divide.at(want, idx, 2.0)
    _check_same(jnp.asarray(x).at[idx].divide(2.0), want)
    want = x.copy()
    want[[1, 3]] = x[[1, 3]] ** np.array([4.0, 2.0], np.float32)
    _check_same(jnp.asarray(x).at[idx].power(2.0), want)
    ints = jnp.arange(5)
    _check_same(ints.at[jnp.array([1, 1, 2])].apply(lambda v: v * 2 + 1),
                np.array([0, 7, 5, 3, 4], np.int32))
    _check_same(jax.jit(lambda a: a.at[jnp.array([1, 1, 2])].apply(lambda v: v * 2 + 1))(ints),
                np.array([0, 7, 5, 3, 4], np.int32))
    with pytest.warns(FutureWarning, match="scatter inputs have incompatible types"):
        out = ints.at[2].set(3.7)
    _check_same(out, np.array([0, 1, 3, 3, 4], np.int32))
    _check_same(jnp.arange(5, dtype=jnp.uint8).at[2].set(-1),
                np.array([0, 1, 255, 3, 4], np.uint8))
    weak = jnp.asarray([1.0, 2.0]) * 1.0
    assert weak.at[0].set(5).weak_type == weak.weak_type
    assert jnp.ones(2).at[np.array([0])].set(5).weak_type is False


def test_update_jaxpr_shared_between_scatters():
    text = str(jax.make_jaxpr(lambda x: x.at[0].add(1.0).at[1].add(2.0))(np.ones(3, np.float32)))
    assert text.startswith("let jaxpr = { lambda ; a:f32[] b:f32[]. let c:f32[] = add a b")
    assert text.count("update_jaxpr=jaxpr") == 2


# ---------------------------------------------------------------------------------------------
# take / take_along_axis
# ---------------------------------------------------------------------------------------------

@given(st.data(), shapes, st.sampled_from([None, "clip", "wrap", "fill"]))
def test_take_matches_numpy(data, shape, mode):
    x = _operand(shape, np.float32)
    axis = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1))
    n = x.size if axis is None else shape[axis]
    idx = np.array(data.draw(st.lists(st.integers(-2 * n, 2 * n), min_size=0, max_size=4)),
                   np.int32)
    got = jnp.take(x, idx, axis=axis, mode=mode)
    if mode in ("clip", "wrap"):
        want = np.take(x, idx, axis=axis, mode=mode)
    else:
        valid = (idx >= -n) & (idx < n)
        want = np.take(x, np.where(valid, idx, 0), axis=axis)
        where = [1] * want.ndim
        start = 0 if axis is None else axis % len(shape)
        where[start:start + idx.ndim] = idx.shape
        want = np.where(valid.reshape(where), want, np.nan).astype(np.float32)
    _check_same(got, want)
    _check_same(jax.jit(lambda a, i: jnp.take(a, i, axis=axis, mode=mode))(x, idx), want)


@given(st.data(), shapes)
def test_take_along_axis_matches_numpy(data, shape):
    x = _operand(shape, np.float32)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[axis]
    idx_shape = [data.draw(st.sampled_from([1, s])) for s in shape]
    idx_shape[axis] = data.draw(st.integers(1, 3))
    count = int(np.prod(idx_shape))
    idx = np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=count, max_size=count)),
                   np.int32).reshape(idx_shape)
    want = np.take_along_axis(x, idx, axis=axis)
    _check_same(jnp.take_along_axis(x, idx, axis=axis), want)
    _check_same(jax.jit(lambda a, i: jnp.take_along_axis(a, i, axis=axis))(x, idx), want)


def test_take_along_axis_errors_and_fill():
    x = jnp.arange(6).reshape(2, 3)
    _check_same(jnp.take_along_axis(x, jnp.array([[0, 5, -1]]), axis=0),
                np.array([[0, -2 ** 31, 5]], np.int32))
    with pytest.raises(ValueError, match="same number of dimensions; 1 vs. 2"):
        jnp.take_along_axis(x, jnp.array([0]), axis=0)
    with pytest.raises(TypeError, match="must be of integer type, got float32"):
        jnp.take_along_axis(x, jnp.array([[0.0]]), axis=0)
    with pytest.raises(ValueError, match="must be 1D if axis=None"):
        jnp.take_along_axis(x, jnp.array([[0]]), axis=None)
    with pytest.raises(IndexError, match="non-empty jnp.take"):
        jnp.take(jnp.zeros((2, 0)), jnp.array([1]), axis=1)


# ---------------------------------------------------------------------------------------------
# lax: dynamic_slice, dynamic_update_slice, gather, scatter
# ---------------------------------------------------------------------------------------------

@given(st.data(), shapes)
def test_dynamic_slice_clamps(data, shape):
    x = _operand(shape, np.float32)
    sizes = [data.draw(st.integers(0, n)) for n in shape]
    starts = [data.draw(st.integers(-2 * n, 2 * n)) for n in shape]
    begin = [min(max(s + n if s < 0 else s, 0), n - z) for s, n, z in zip(starts, shape, sizes)]
    want = x[tuple(slice(b, b + z) for b, z in zip(begin, sizes))]
    _check_same(lax.dynamic_slice(x, starts, sizes), want)
    traced = jax.jit(lambda x, *s: lax.dynamic_slice(x, s, sizes))
    _check_same(traced(x, *[np.int32(s) for s in starts]), want)
    update = np.full(sizes, -1.0, np.float32)
    expected = x.copy()
    expected[tuple(slice(b, b + z) for b, z in zip(begin, sizes))] = update
    _check_same(lax.dynamic_update_slice(x, update, starts), expected)
    _check_same(jax.jit(lambda x, u, *s: lax.dynamic_update_slice(x, u, s))(
        x, update, *[np.int32(s) for s in starts]), expected)


def test_dynamic_slice_errors():
    x = jnp.ones((2, 3))
    with pytest.raises(ValueError, match="Length of slice indices must match"):
        lax.dynamic_slice(x, (0,), (1, 2))
    with pytest.raises(TypeError, match="slice_sizes must be less than or equal"):
        lax.dynamic_slice(x, (0, 0), (3, 2))
    with pytest.raises(TypeError, match="must be integers of the same type, got: int8, int32"):
        lax.dynamic_slice(x, (jnp.int8(0), 0), (1, 2))
    with pytest.raises(TypeError, match="requires arguments to have the same dtypes"):
        lax.dynamic_update_slice(x, jnp.ones((1, 2), jnp.int32), (0, 0))
    with pytest.raises(TypeError, match="update must have the same rank"):
        lax.dynamic_update_slice(x, jnp.ones(2), (0, 0))


def test_index_in_dim_helpers():
    x = _operand((2, 3), np.float32)
    _check_same(lax.dynamic_index_in_dim(x, -1, 1, False), x[:, -1])
    _check_same(lax.dynamic_slice_in_dim(x, 1, 2, 1), x[:, 1:3])
    _check_same(lax.dynamic_update_slice_in_dim(x, np.zeros((1, 3), np.float32), 1, 0),
                np.concatenate([x[:1], np.zeros((1, 3), np.float32)]))
    _check_same(ix.dynamic_update_index_in_dim(x, np.zeros(3, np.float32), 0, 0),
                np.concatenate([np.zeros((1, 3), np.float32), x[1:]]))
    _check_same(ix.index_in_dim(x, -1, 1, keepdims=False), x[:, -1])
    _check_same(ix.slice_in_dim(x, None, -1, 2, axis=1), x[:, :-1:2])
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 3"):
        ix.index_in_dim(x, 3, 1)


def test_gather_with_batching_dims():
    """take_along_axis style gather: operand dim 0 and indices dim 0 are batching dims."""
    x = _operand((3, 4), np.float32)
    idx = np.array([[1, 3], [0, 0], [2, 9]], np.int32)
    dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,),
                                    start_index_map=(1,), operand_batching_dims=(0,),
                                    start_indices_batching_dims=(0,))
    got = lax.gather(x, idx[..., None], dn, (1, 1), mode="fill", fill_value=-1.0)
    want = np.where(idx < 4, np.take_along_axis(x, np.minimum(idx, 3), 1), -1.0)
    _check_same(got, want.astype(np.float32))
    clipped = lax.gather(x, idx[..., None], dn, (1, 1), mode="clip")
    _check_same(clipped, np.take_along_axis(x, np.minimum(idx, 3), 1))
    sdn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(1,),
                                      scatter_dims_to_operand_dims=(1,),
                                      operand_batching_dims=(0,),
                                      scatter_indices_batching_dims=(0,))
    ones = np.ones((3, 2), np.float32)
    want = x.copy()
    for b in range(3):
        for j in range(2):
            if idx[b, j] < 4:
                want[b, idx[b, j]] += 1
    _check_same(lax.scatter_add(x, idx[..., None], ones, sdn), want)


def test_gather_windows_and_scatter_windows():
    """Windows of several elements: gather clamps the window start, scatter drops windows
    that do not fit (FILL_OR_DROP) or clamps them (CLIP)."""
    x = _operand((4, 5), np.int32)
    starts = np.array([[0, 0], [3, 4], [-1, 2]], np.int32)
    dn = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(),
                                    start_index_map=(0, 1))
    got = lax.gather(x, starts, dn, (2, 3))
    clamp = [(min(max(r, 0), 2), min(max(c, 0), 2)) for r, c in starts]
    _check_same(got, np.stack([x[r:r + 2, c:c + 3] for r, c in clamp]))
    sdn = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(),
                                      scatter_dims_to_operand_dims=(0, 1))
    upd = np.full((3, 2, 3), 7, np.int32)
    want = x.copy()
    want[0:2, 0:3] = 7
    _check_same(lax.scatter(x, starts, upd, sdn), want)
    want_clip = x.copy()
    for r, c in clamp:
        want_clip[r:r + 2, c:c + 3] = 7
    _check_same(lax.scatter(x, starts, upd, sdn, mode="clip"), want_clip)


def test_gather_scatter_shape_errors():
    x = jnp.ones((2, 3))
    dn = lax.GatherDimensionNumbers((1,), (0,), (0,))
    with pytest.raises(ValueError, match="indices must have an integer type"):
        lax.gather(x, jnp.zeros((2, 1), jnp.float32), dn, (1, 3))
    with pytest.raises(TypeError, match="can only collapse slice dims with bound 1"):
        lax.gather(x, jnp.zeros((2, 1), jnp.int32), dn, (2, 3))
    sdn = lax.ScatterDimensionNumbers((1,), (0,), (0,))
    with pytest.raises(TypeError, match="lax.scatter requires arguments to have the same"):
        lax.scatter(x, jnp.zeros((2, 1), jnp.int32), jnp.ones((2, 3), jnp.int32), sdn)
    with pytest.raises(TypeError, match="Bounds of the window dimensions of updates"):
        lax.scatter(x, jnp.zeros((2, 1), jnp.int32), jnp.ones((2, 4)), sdn)


def test_params_print_like_jax():
    dn = ix.GatherDimensionNumbers(offset_dims=(0,), collapsed_slice_dims=(1,),
                                   start_index_map=(1,))
    assert str(dn) == ("GatherDimensionNumbers(offset_dims=(0,), collapsed_slice_dims=(1,), "
                       "start_index_map=(1,), operand_batching_dims=(), "
                       "start_indices_batching_dims=())")
    assert str(ix.GatherScatterMode.FILL_OR_DROP) == "GatherScatterMode.FILL_OR_DROP"
    assert ix.GatherScatterMode.from_any(None) is ix.GatherScatterMode.FILL_OR_DROP
    assert ix.GatherScatterMode.from_any("clip") is ix.GatherScatterMode.CLIP
