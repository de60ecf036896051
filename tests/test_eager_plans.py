"""Eager plans (pyjax/_src/backend/eager_plans.py): an eager jnp call is recorded on its second
call with a signature and replayed from the third.  A replay must give what the function
computes, for any values of the same types; calls that depend on values, warn, or cannot be
replayed must stay unplanned."""
import inspect
import threading
import warnings

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src.backend import eager_plans
from pyjax._src.errors import ConcretizationTypeError

RNG = np.random.default_rng(0)


def _arrays(shape=(3, 4), dtype=np.float32, n=4):
    return [RNG.normal(size=shape).astype(dtype) for _ in range(n)]


def _plan_of(fun):
    """The plans recorded for `fun` (the undecorated function)."""
    target = inspect.unwrap(fun)
    return [p for k, p in eager_plans._plans.items() if k[0] is target]


# (jnp call, NumPy reference) on operands of one type and changing values
CASES = {
    "sum": (lambda x, y: jnp.sum(x), lambda x, y: np.sum(x)),
    "sum_axis_keepdims": (lambda x, y: jnp.sum(x, axis=1, keepdims=True),
                          lambda x, y: np.sum(x, axis=1, keepdims=True)),
    "mean": (lambda x, y: jnp.mean(x, axis=0), lambda x, y: np.mean(x, axis=0)),
    "max": (lambda x, y: jnp.max(x), lambda x, y: np.max(x)),
    "argmax": (lambda x, y: jnp.argmax(x), lambda x, y: np.argmax(x)),
    "argmin_axis": (lambda x, y: jnp.argmin(x, axis=1), lambda x, y: np.argmin(x, axis=1)),
    "any": (lambda x, y: jnp.any(x > 0, axis=0), lambda x, y: np.any(x > 0, axis=0)),
    "where": (lambda x, y: jnp.where(x > 0, x, y), lambda x, y: np.where(x > 0, x, y)),
    "clip": (lambda x, y: jnp.clip(x, -0.5, 0.5), lambda x, y: np.clip(x, -0.5, 0.5)),
    "signbit": (lambda x, y: jnp.signbit(x), lambda x, y: np.signbit(x)),
    "copysign": (lambda x, y: jnp.copysign(x, y), lambda x, y: np.copysign(x, y)),
    "var": (lambda x, y: jnp.var(x, axis=1), lambda x, y: np.var(x, axis=1)),
    "dot": (lambda x, y: jnp.dot(x, y.T), lambda x, y: np.dot(x, y.T)),
    "matmul": (lambda x, y: jnp.matmul(x.T, y), lambda x, y: np.matmul(x.T, y)),
    "einsum": (lambda x, y: jnp.einsum("ij,kj->ik", x, y),
               lambda x, y: np.einsum("ij,kj->ik", x, y)),
    "concatenate": (lambda x, y: jnp.concatenate([x, y], axis=1),
                    lambda x, y: np.concatenate([x, y], axis=1)),
    "stack": (lambda x, y: jnp.stack([x, y]), lambda x, y: np.stack([x, y])),
    "reshape": (lambda x, y: jnp.reshape(x, (-1, 2)), lambda x, y: np.reshape(x, (-1, 2))),
    "transpose": (lambda x, y: jnp.transpose(x), lambda x, y: np.transpose(x)),
    "astype": (lambda x, y: x.astype(jnp.int32), lambda x, y: x.astype(np.int32)),
    "divmod": (lambda x, y: jnp.divmod(x, y), lambda x, y: np.divmod(x, y)),
    "cumsum": (lambda x, y: jnp.cumsum(x, axis=0), lambda x, y: np.cumsum(x, axis=0)),
    # custom_jvp functions run their function, as eagerly
    "softmax": (lambda x, y: pyjax.nn.softmax(x), lambda x, y: np.exp(x - x.max(-1, keepdims=True))
                / np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)),
    "relu": (lambda x, y: pyjax.nn.relu(x), lambda x, y: np.maximum(x, 0)),
    "zeros_like": (lambda x, y: jnp.zeros_like(x) + x, lambda x, y: x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_replays_follow_the_values(name):
    """The signbit defect: a result computed outside the recorded primitives must not be
    replayed as a constant.  Each call has new values of the same types."""
    fn, ref = CASES[name]
    pairs = list(zip(_arrays(), _arrays()[::-1]))
    for x, y in pairs + pairs:
        got = fn(jnp.asarray(x), jnp.asarray(y))
        want = ref(x, y)
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(np.asarray(g), w, rtol=2e-6, atol=2e-6)


def test_scatter_replays_follow_the_indices():
    x = jnp.asarray(np.zeros(6, np.float32))
    for rows in ([0, 3, 5], [1, 1, 2], [5, -1, 0], [2, 2, 2]) * 2:
        idx = jnp.asarray(np.array(rows, np.int32))
        want = np.zeros(6, np.float32)
        np.add.at(want, np.array(rows), 1.0)
        np.testing.assert_array_equal(np.asarray(x.at[idx].add(1.0)), want)
        want = np.zeros(6, np.float32)
        want[np.array(rows)] = 2.0
        np.testing.assert_array_equal(np.asarray(x.at[idx].set(2.0)), want)


def test_plans_without_operands_return_new_arrays():
    """Creation functions are planned too (their result is a constant of the signature); each
    call still returns a new Array, and config changes what they make."""
    for _ in range(3):
        a, b = jnp.linspace(0, 1, 5), jnp.linspace(0, 1, 5)
        assert a is not b and a.tolist() == [0, 0.25, 0.5, 0.75, 1] and a.dtype == np.float32
        assert jnp.zeros((2, 3)).shape == (2, 3) and jnp.arange(4).dtype == np.int32
        with pyjax.enable_x64(True):
            assert jnp.arange(4).dtype == np.int64 and jnp.zeros(2).dtype == np.float64
    assert any(callable(p) for p in _plan_of(jnp.linspace))
    assert jnp.eye(3, k=1).tolist() == np.eye(3, k=1).tolist()
    assert jnp.eye(3, k=-1).tolist() == np.eye(3, k=-1).tolist()


def test_plans_do_not_pin_big_constants():
    """A plan keeps its constants alive as long as the cache: calls that would keep more
    than MAX_HELD_BYTES stay unplanned (a broadcast counts its source only)."""
    pyjax.clear_caches()
    for _ in range(3):
        assert jnp.eye(1024).shape == (1024, 1024)  # 4 MiB of constant result
        assert jnp.zeros((1024, 1024)).shape == (1024, 1024)  # a broadcast of one zero
    assert _plan_of(jnp.eye) == [None]
    assert any(callable(p) for p in _plan_of(jnp.zeros))


def test_plans_are_recorded_on_the_second_call_and_keep_types():
    x = jnp.asarray(_arrays()[0])
    pyjax.clear_caches()
    first = [jnp.sum(x * 1, axis=0) for _ in range(3)]
    assert any(callable(p) for p in _plan_of(jnp.sum))
    for r in first:
        assert type(r) is type(first[0]) and r.dtype == np.float32 and not r.weak_type
    weak = jnp.asarray(2.0)  # weak results stay weak through the plan (as in JAX)
    results = [jnp.clip(weak, 0.0, 1.0) for _ in range(3)] + [
        jnp.where(weak > 1, weak, 0.0) for _ in range(3)]
    assert all(r.weak_type for r in results)
    assert not any(jnp.sum(weak).weak_type for _ in range(3))


def test_python_scalar_statics_key_by_type_and_sign():
    c = jnp.asarray(np.array([True, False]))
    x = jnp.asarray(np.array([1.0, 1.0], np.float32))
    for _ in range(3):
        assert np.signbit(np.asarray(jnp.where(c, x, -0.0)))[1]
        assert not np.signbit(np.asarray(jnp.where(c, x, 0.0)))[1]
    i = jnp.asarray(np.array([1, 2], np.int32))
    for _ in range(3):
        assert jnp.where(i > 1, i, 0).dtype == np.int32
        assert jnp.where(i > 1, i, 0.5).dtype == np.float32


def test_an_array_passed_twice_has_its_own_plan():
    x, y = (jnp.asarray(a) for a in _arrays(n=2))
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(jnp.dot(x, x.T)), np.dot(x, x.T), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(jnp.dot(x, y.T)), np.dot(x, y.T), rtol=1e-6)
    a = jnp.asarray(np.arange(3.0, dtype=np.float32))
    b = jnp.asarray(np.ones(3, np.float32))
    for _ in range(3):
        assert jnp.concatenate([a, a]).tolist() == [0, 1, 2, 0, 1, 2]
        assert jnp.concatenate([a, b]).tolist() == [0, 1, 2, 1, 1, 1]
    c = jnp.asarray(np.array([True, False, True]))
    for _ in range(3):  # three operands (compared pairwise), and more
        for x, y in ((a, b), (a, a), (b, b)):
            assert jnp.where(c, x, y).tolist() == np.where(c, x, y).tolist()
        assert jnp.where(c, c, a).tolist() == [1, 1, 1]
        for parts in ([a, b, a, b], [a, b, b, a], [b, a, b, b], [a, b, a, a]):
            want = np.concatenate([np.asarray(p) for p in parts]).tolist()
            assert jnp.concatenate(parts).tolist() == want


def test_value_dependent_functions_stay_unplanned():
    """A function that needs an operand's value cannot be replayed: it raises under the
    recorder, so it runs as usual every time."""
    @eager_plans.planned
    def take_first_n(x):
        return jnp.sum(x[:int(x[0])])

    for values in ([2.0, 1.0, 1.0, 1.0], [3.0, 1.0, 1.0, 1.0], [1.0, 5.0, 5.0, 5.0]) * 2:
        x = jnp.asarray(np.array(values, np.float32))
        assert float(take_first_n(x)) == sum(values[:int(values[0])])
    assert _plan_of(take_first_n) == [None]

    @eager_plans.planned
    def needs_value(x):
        if x.sum() > 0:  # bool() of an operand: a ConcretizationTypeError under jit
            return x
        return -x
    for v in (1.0, -1.0, 2.0, -2.0):
        assert float(needs_value(jnp.asarray(np.float32(v)))) == abs(v)
    with pytest.raises(ConcretizationTypeError):
        pyjax.jit(needs_value)(jnp.asarray(np.float32(1.0)))


def test_errors_are_the_functions_own():
    x = jnp.asarray(np.ones((2, 3), np.float32))
    for _ in range(3):
        with pytest.raises(ValueError, match="axis 5 is out of bounds"):
            jnp.sum(x, axis=5)
        with pytest.raises(TypeError):
            jnp.reshape(x, (4, 4))


def test_warnings_repeat_on_every_call():
    x = jnp.asarray(np.ones(3, np.float32))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(4):
            x.astype(jnp.float64)
    assert sum("float64" in str(w.message) for w in caught) == 4


def test_config_is_part_of_the_key():
    i = jnp.asarray(np.arange(4, dtype=np.int32))
    for _ in range(3):
        assert jnp.sum(i).dtype == np.int32
        with pyjax.enable_x64(True):
            assert jnp.sum(i).dtype == np.int64
    f, g = jnp.asarray(np.arange(4.0, dtype=np.float32)), jnp.ones((2, 4))
    with pyjax.numpy_rank_promotion("raise"):
        for _ in range(3):
            with pytest.raises(ValueError, match="rank_promotion='raise'"):
                jnp.copysign(f, g)
    for _ in range(3):
        assert jnp.copysign(f, g).shape == (2, 4)


def test_process_wide_config_is_part_of_the_key():
    """config.update changes the number plans key the process-wide options by."""
    i = jnp.asarray(np.arange(4, dtype=np.int32))
    previous = pyjax.config.x64
    try:
        for _ in range(3):
            pyjax.config.update("jax_enable_x64", False)
            assert jnp.sum(i).dtype == np.int32
            pyjax.config.update("jax_enable_x64", True)
            assert jnp.sum(i).dtype == np.int64
            with pyjax.enable_x64(False):  # an override over the updated value
                assert jnp.sum(i).dtype == np.int32
    finally:
        pyjax.config.update("jax_enable_x64", previous)


def test_outputs_that_are_operands_or_constants():
    x = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    for _ in range(3):
        assert jnp.reshape(x, (2, 3)) is x  # no equation, the operand itself
        assert jnp.squeeze(x) is x


def test_threads_share_plans_safely():
    shapes = [(n,) for n in range(1, 9)]
    data = {s: RNG.normal(size=s).astype(np.float32) for s in shapes}
    errors = []

    def work(k):
        try:
            for rep in range(30):
                for s in shapes:
                    v = data[s] * (k + 1)
                    got = jnp.where(jnp.asarray(v) > 0, jnp.sum(jnp.asarray(v)), 0.0)
                    want = np.where(v > 0, np.sum(v), 0.0)
                    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_clear_caches_drops_plans():
    x = jnp.asarray(np.ones(3, np.float32))
    for _ in range(3):
        jnp.sum(x)
    assert _plan_of(jnp.sum)
    pyjax.clear_caches()
    assert not _plan_of(jnp.sum)


def test_traced_calls_do_not_use_plans():
    """Under jit the functions stage as before (the jaxpr is JAX's)."""
    x = jnp.asarray(np.ones(3, np.float32))
    for _ in range(3):
        jnp.where(x > 0, x, 0.0)
    text = str(pyjax.make_jaxpr(lambda v: jnp.where(v > 0, v, 0.0))(x))
    assert "name=_where" in text


# ---------------------------------------------------------------------------------------------
# Specialised impls (Primitive.specialize): a plan gives the unplanned call's bits
# ---------------------------------------------------------------------------------------------

BF16 = np.dtype(pyjax.numpy.bfloat16)
#: float values with the cases impls special-case: signed zeros, NaN, infinities, a float32
#: subnormal, values past int32's range (the CPU's cast sentinel), ordinary values
FLOAT_VALUES = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-39, -3e-39, 3e9, -3e9, 1.5, -2.5, 0.25,
                7.0, -1e3, 0.5, -0.5]
IN_RANGE = [1.5, -2.5, 0.25, 7.0, -1e3, 0.5, -0.5, 0.0, -0.0, 3.75, -8.0, 100.0]


def _filled(shape, dtype, values=FLOAT_VALUES, shift=0):
    """An array of `shape` and `dtype` cycling through `values` (floats) or small ints."""
    n = int(np.prod(shape))
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        flat = (np.arange(n) + shift) % 3 == 0
    elif dtype.kind in "iu":
        flat = (np.arange(n) * 7 + shift) % 11 - (5 if dtype.kind == "i" else 0)
    else:
        with np.errstate(over="ignore"):
            flat = np.array([values[(i + shift) % len(values)] for i in range(n)], np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return jnp.asarray(np.asarray(flat).astype(dtype).reshape(shape))


def _same(got, want):
    """Identical Arrays: type (once computed: a jitted result may be pending), shape, dtype,
    weak type and bits (NaN payloads included)."""
    assert type(pyjax.block_until_ready(got)) is type(pyjax.block_until_ready(want))
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    assert (got.shape, got.dtype, got.weak_type) == (want.shape, want.dtype, want.weak_type)
    g, w = np.asarray(got), np.asarray(want)
    assert g.tobytes() == w.tobytes(), (g, w)


class _NoPlans(dict):
    """A plan table in which every signature is known to be unplannable."""

    def get(self, key, default=None):
        return None


def _unplanned(monkeypatch, fn, *args):
    with monkeypatch.context() as m:
        m.setattr(eager_plans, "_plans", _NoPlans())
        return fn(*args)


def _warned(fn, *args):
    """fn(*args) and the warnings it gives past pyjax's own filter (its RuntimeWarnings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"pyjax\._src\.")
        out = fn(*args)
    return out, [(w.category, str(w.message)) for w in caught]


def _check_planned(monkeypatch, fn, operands):
    """fn on each tuple of `operands` (all of one signature) through its plan gives what it
    gives unplanned, warnings included; the plan is used (its signature is recorded)."""
    pyjax.clear_caches()
    first = operands[0]
    for _ in range(2):  # the first call runs as usual, the second records
        fn(*first)
    assert any(callable(p) for p in eager_plans._plans.values()), "no plan was recorded"
    for ops in operands:
        got, got_warnings = _warned(fn, *ops)
        want, want_warnings = _warned(_unplanned, monkeypatch, fn, *ops)
        _same(got, want)
        assert got_warnings == want_warnings


REDUCTIONS = {
    "sum": lambda x: jnp.sum(x),
    "sum_axis0": lambda x: jnp.sum(x, axis=0),
    "sum_keepdims": lambda x: jnp.sum(x, axis=-1, keepdims=True),
    "prod": lambda x: jnp.prod(x, axis=-1),
    "mean": lambda x: jnp.mean(x),
    "mean_axis": lambda x: jnp.mean(x, axis=-1, keepdims=True),
    "max": lambda x: jnp.max(x),
    "min_axis0": lambda x: jnp.min(x, axis=0),
    "max_keepdims": lambda x: jnp.max(x, axis=0, keepdims=True),
    "any": lambda x: jnp.any(x),
    "all_axis": lambda x: jnp.all(x, axis=-1),
    "any_keepdims": lambda x: jnp.any(x, axis=0, keepdims=True),
    "all_keepdims": lambda x: jnp.all(x, axis=-1, keepdims=True),
    "argmax": lambda x: jnp.argmax(x),
    "argmin_axis": lambda x: jnp.argmin(x, axis=-1),
    "argmax_keepdims": lambda x: jnp.argmax(x, axis=0, keepdims=True),
}
DTYPES = [np.float32, np.float16, BF16, np.int32, np.int8, np.uint8, np.bool_,
          np.dtype(jnp.int4), np.dtype(jnp.float8_e4m3fn)]
SHAPES = [(10,), (3, 4), (1, 10), (0, 3), (4, 0)]


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_specialised_reductions_give_the_unplanned_bits(monkeypatch, name, dtype, shape):
    fn = REDUCTIONS[name]
    operands = [(_filled(shape, dtype, shift=s),) for s in range(4)]
    try:
        _unplanned(monkeypatch, fn, *operands[0])
    except (TypeError, ValueError):  # (max of an empty array, bool prod ...): not planned
        return
    _check_planned(monkeypatch, fn, operands)


def test_specialised_reductions_of_scalars_and_broadcasts(monkeypatch):
    """0-d operands, weak operands, and broadcast buffers (folded by `run`) through plans."""
    for fn in REDUCTIONS.values():
        for operands in ([(jnp.asarray(np.float32(v)),) for v in (1.5, -0.0)],
                         [(jnp.asarray(v),) for v in (2.5, np.nan)],  # weak
                         [(jnp.full((1000,), np.float32(v)),) for v in (0.1, -0.0, 3.0)],
                         [(jnp.full((3, 1000), v, np.int8),) for v in (1, -3)]):
            try:
                _unplanned(monkeypatch, fn, *operands[0])
            except (ValueError, IndexError):  # an axis a scalar lacks (argmin: as JAX's)
                continue
            _check_planned(monkeypatch, fn, operands)


def test_boolean_reductions_to_one_element_count(monkeypatch):
    """all/any whose result has one element (of any rank) count the true elements: each
    call gives the unplanned result, a new buffer each time, all true, all false or mixed."""
    fns = [lambda c: jnp.all(c), lambda c: jnp.any(c, axis=-1),
           lambda c: jnp.all(c, axis=-1, keepdims=True), lambda c: jnp.any(c, keepdims=True)]
    for shape in [(10,), (1, 10), (1, 1, 3), (1,)]:
        operands = [(jnp.asarray(np.full(shape, v)),) for v in (True, False)] + [
            (jnp.asarray(np.arange(np.prod(shape)).reshape(shape) % 2 == 1),)]
        for fn in fns:
            _check_planned(monkeypatch, fn, operands)
            first, second = fn(*operands[0]), fn(*operands[0])
            assert first._buf is not second._buf


def test_specialised_reductions_accumulate_long_sums_wide(monkeypatch):
    values = [(jnp.asarray(np.full((3, 40000), v, np.float32)),) for v in (0.1, 1e-3)]
    _check_planned(monkeypatch, lambda x: jnp.sum(x, axis=1), values)
    _check_planned(monkeypatch, lambda x: jnp.sum(x), values)


#: (planned as a whole: jnp.maximum, divide ... have no plans of their own)
ELEMENTWISE = {
    "where": lambda c, x, y: jnp.where(c, x, y),
    "where_gt": lambda c, x, y: jnp.where(x > 0, x, y),
    "where_scalar": lambda c, x, y: jnp.where(c, x, 0.0),
    "clip": lambda c, x, y: jnp.clip(x, -0.5, 0.5),
    "clip_zero": lambda c, x, y: jnp.clip(x, 0.0, 1.0),
    "clip_neg_zero": lambda c, x, y: jnp.clip(x, -1.0, -0.0),
    "maximum": lambda c, x, y: jnp.maximum(x, y),
    "minimum": lambda c, x, y: jnp.minimum(x, y),
    "divide": lambda c, x, y: jnp.divide(x, y),
    "mean_of_product": lambda c, x, y: jnp.mean(x * y, axis=0),
    "stack": lambda c, x, y: jnp.stack([x, y]),
    "stack_axis1": lambda c, x, y: jnp.stack([x, y, x], axis=1),
    "stack_last": lambda c, x, y: jnp.stack([y, x], axis=-1),
    # primitives computed by a ufunc (the ufunc itself for NumPy's dtypes)
    "add": lambda c, x, y: x + y,
    "greater": lambda c, x, y: x > y,
    "less_scalar": lambda c, x, y: x < 1,
    "equal": lambda c, x, y: x == y,
    "negative": lambda c, x, y: -x,
    "bitwise_and": lambda c, x, y: x & y,
    "floor": lambda c, x, y: jnp.floor(x),
}
SHAPES_2 = [(), (10,), (2, 3), (0,), (3, 0)]


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16, np.int32, np.uint8, np.bool_],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES_2, ids=str)
def test_specialised_elementwise_give_the_unplanned_bits(monkeypatch, name, dtype, shape):
    fn = eager_plans.planned(ELEMENTWISE[name])
    operands = [(_filled(shape, np.bool_, shift=s), _filled(shape, dtype, shift=s),
                 _filled(shape, dtype, shift=s + 5)) for s in range(5)]
    try:
        _unplanned(monkeypatch, fn, *operands[0])
    except (TypeError, ValueError):
        return
    _check_planned(monkeypatch, fn, operands)


def test_selects_with_a_scalar_condition_and_weak_cases(monkeypatch):
    for c in (True, False):
        _check_planned(monkeypatch, lambda c, x: jnp.where(c, x, -x),
                       [(jnp.asarray(c), _filled((4,), np.float32, shift=s)) for s in range(3)])
    _check_planned(monkeypatch, lambda c, x: jnp.where(c, x, 2.0),
                   [(_filled((5,), np.bool_, shift=s), jnp.asarray(-0.0)) for s in range(3)])


CASTS = [(np.float32, np.int32), (np.float32, np.int64), (np.float16, np.int32),
         (np.float32, np.int8), (np.float32, np.uint32), (np.float32, np.float16),
         (np.float32, BF16), (np.float32, np.complex64), (np.float32, np.bool_),
         (np.int32, np.float32), (np.int32, np.float16), (np.int32, np.int8),
         (np.uint8, np.int32), (np.bool_, np.float32), (np.bool_, np.int32),
         (np.int8, np.bool_), (np.complex64, np.float32), (BF16, np.int32)]


@pytest.mark.parametrize("source,target", CASTS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("values", ["specials", "in_range"])
@pytest.mark.parametrize("shape", [(), (16,), (2, 8), (0,)], ids=str)
def test_specialised_casts_give_the_unplanned_bits(monkeypatch, source, target, values, shape):
    """x.astype: float -> int32/int64 checks the CPU's sentinel (NaN, infinities and values
    out of range saturate as in XLA); the other casts of NumPy's dtypes are plain casts."""
    pool = FLOAT_VALUES if values == "specials" else IN_RANGE
    operands = [(_filled(shape, source, pool, shift=s),) for s in range(4)]
    with pyjax.enable_x64(np.dtype(target).itemsize == 8):
        _check_planned(monkeypatch, lambda x: x.astype(target), operands)


def test_casts_of_in_range_floats_with_a_sentinel_value(monkeypatch):
    """-2**31 is int32's sentinel, and in range: the slow path gives it too."""
    operands = [(jnp.asarray(np.array([v, 1.0], np.float32)),) for v in (-2.0 ** 31, 5.0)]
    _check_planned(monkeypatch, lambda x: x.astype(jnp.int32), operands)


def test_specialised_impls_without_numpys_array_results(monkeypatch):
    """Where NumPy lacks `out=...` (before 2.3), exact impls convert NumPy scalars."""
    from pyjax._src.primitives import _rules
    monkeypatch.setattr(_rules, "_OUT_ELLIPSIS", False)
    for fn in (REDUCTIONS["sum"], REDUCTIONS["max"], REDUCTIONS["any"], REDUCTIONS["mean"]):
        _check_planned(monkeypatch, fn, [(_filled((5,), np.float32, shift=s),)
                                         for s in range(3)])
    divide = eager_plans.planned(ELEMENTWISE["divide"])
    _check_planned(monkeypatch, divide, [(None, _filled((), np.float32, shift=s),
                                          _filled((), np.float32, shift=s + 1))
                                         for s in range(4)])


def test_plans_fuse_keepdims_and_guard_broadcasts(monkeypatch):
    """A reduction only reshaped to keepdims' shape is one step; reductions that fold
    broadcast operands take `run` for them (a plan recorded on a dense operand, then given a
    broadcast one of the same type: the unplanned bits, sum's copies times the total)."""
    pyjax.clear_caches()
    a = _filled((3, 4), np.float32, IN_RANGE)
    for _ in range(3):
        jnp.sum(a, axis=1, keepdims=True)
    source, = eager_plans.plans_of(jnp.sum)
    assert source.count(" = f") == 1 and "f0_keepdims.broadcasts(a0)" in source
    assert "_keepdims_func(a0, axis=f0_keepdims_kw_axis, " in source  # (the partial spelt out)
    dense = [(_filled((1000,), np.float32, [0.1, 0.3, -0.7], shift=s),) for s in range(2)]
    broadcast = [(jnp.full((1000,), np.float32(v)),) for v in (0.1, -0.3)]
    for fn in (REDUCTIONS["sum"], REDUCTIONS["sum_keepdims"], REDUCTIONS["max"],
               REDUCTIONS["mean"]):
        _check_planned(monkeypatch, fn, dense + broadcast + dense)


def test_plans_switch_numpy_errors_off_around_quiet_impls(monkeypatch):
    """A division in a plan warns as little as unplanned (NumPy's errors off around it), and
    the error state is restored after it, even when the user's raises."""
    x = jnp.asarray(np.array([1.0, 0.0, np.inf], np.float32))
    y = jnp.asarray(np.array([0.0, 0.0, np.inf], np.float32))
    divide = eager_plans.planned(lambda x, y: jnp.divide(x, y))
    with np.errstate(all="raise"):
        for _ in range(3):
            out = divide(x, y)
        with pytest.raises(FloatingPointError):
            np.float32(1) / np.float32(0)
    assert np.asarray(out).tolist()[0] == np.inf
    assert any(callable(p) for p in eager_plans._plans.values())


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16, np.int32, np.int8, np.uint8,
                                   np.bool_], ids=lambda d: np.dtype(d).name)
def test_array_scalar_operators_repeat_the_general_promotion(monkeypatch, dtype):
    """`x op scalar` converts each scalar once per (value, sign, dtype, x64) and skips its
    checks after, and from its third call replays its plan: repeated calls give what the
    lattice gives unplanned, errors included."""
    from pyjax._src.numpy import util
    x = _filled((6,), dtype, IN_RANGE)
    scalars = [0, 1, -3, 2 ** 31 - 1, -2 ** 31, 2 ** 31, 0.0, -0.0, 1.5, -2.5, np.nan, 1e30,
               1 + 2 ** -11 + 2 ** -40, 2j, True]
    ops = [lambda x, s: x > s, lambda x, s: s < x, lambda x, s: x + s, lambda x, s: s * x,
           lambda x, s: x == s]

    def outcome(fn, s):
        try:
            return fn(x, s)
        except (TypeError, OverflowError) as e:
            return type(e)

    for x64 in (False, True):
        with pyjax.enable_x64(x64):
            for fn in ops:
                for s in scalars:
                    got = [outcome(fn, s) for _ in range(4)]
                    with monkeypatch.context() as m:
                        m.setattr(util, "_array_and_scalar", lambda x, y: None)
                        m.setattr(eager_plans, "_plans", _NoPlans())
                        want = outcome(fn, s)
                    for g in got:
                        if isinstance(want, type):
                            assert g is want
                        else:
                            _same(g, want)


def test_array_scalar_operators_replay_plans_by_scalar_type_value_and_sign(monkeypatch):
    """`x op scalar` replays one plan per (operator, x's type, scalar's type, value, sign):
    0.0 and -0.0, 1 and 1.0, a weak x and a strong one, x op s and s op x stay apart."""
    pyjax.clear_caches()
    x = jnp.asarray(np.array([-1.0, 0.0, -0.0, 2.0], np.float32))
    weak = jnp.asarray(2.5)
    assert weak.weak_type
    cases = [(x, 0.0), (x, -0.0), (x, 1), (x, 1.0), (weak, 3), (weak, -0.0)]
    ops = [lambda x, s: x * s, lambda x, s: s / x, lambda x, s: x - s, lambda x, s: s >= x]
    for _ in range(3):
        got = [fn(a, s) for fn in ops for a, s in cases]
    assert sum(callable(p) for p in eager_plans._plans.values()) == len(ops) * len(cases)
    with monkeypatch.context() as m:
        m.setattr(eager_plans, "_plans", _NoPlans())
        want = [fn(a, s) for fn in ops for a, s in cases]
    for g, w in zip(got, want):
        _same(g, w)


def test_array_scalar_operators_of_tracers_and_other_operands_take_the_usual_path():
    """Under a trace, and with a NumPy scalar or a bool, an operator runs as before."""
    x = jnp.asarray(np.array([1.0, -2.0], np.float32))
    assert str(pyjax.make_jaxpr(lambda x: x > 0)(x)) == str(pyjax.make_jaxpr(
        lambda x: jnp.greater(x, 0))(x))
    for _ in range(3):
        for s in (np.float32(0.5), True, np.int8(3)):
            _same(x + s, jnp.add(x, s))
