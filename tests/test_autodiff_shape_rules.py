"""Autodiff rules of the shape, indexing, cumulative/sort and random primitives.

- Numerical checks (pyjax.test_util.check_grads: forward and reverse mode to order 2, central
  differences) in float64 under x64, and a few in float32 with its default tolerances.
- Transposition: <ct, f(t)> == <f^T(ct), t> for the linear primitives (pyjax.linear_transpose).
- Exact printed jaxprs of gradients against JAX 0.10.2's, recorded by
  tests/oracle/record_ad_shape.py into tests/data/ad_shape_jaxprs.json.
"""
import json
import os
import sys

import numpy as np
import pytest

import pyjax as jax
import pyjax.lax as lax
import pyjax.numpy as jnp
from pyjax._src.core import dtypes
from pyjax._src.primitives import extra, prng
from pyjax._src.primitives import shape as shp
from pyjax._src.transforms import ad
from pyjax.test_util import check_grads

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "oracle"))
from record_ad_shape import ad_shape_cases  # noqa: E402


def rand(*shape, seed=0, dtype=np.float64):
    return np.random.RandomState(seed).randn(*shape).astype(dtype)


def distinct(*shape, seed=0, dtype=np.float64):
    """Values at least 0.1 apart (no ties for sort / max / min within a finite-difference step)."""
    n = int(np.prod(shape))
    values = np.random.RandomState(seed).permutation(n) * 0.37 - n * 0.15
    return values.reshape(shape).astype(dtype)


def at(x):
    """x.at for NumPy arguments too (check_grads evaluates the function on NumPy arrays)."""
    return jnp.asarray(x).at


IDX = np.array([0, 2, 2, 4])       # repeated indices
UNIQ = np.array([3, 0, 5])         # unique indices


# ---------------------------------------------------------------------------------------------
# Numerical checks, float64, order 2 (each case: function, args)
# ---------------------------------------------------------------------------------------------

SHAPE_CASES = {
    "broadcast_in_dim": (lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (0, 2)), [rand(2, 4)]),
    "broadcast_in_dim_unit": (lambda x: lax.broadcast_in_dim(x, (3, 5, 4), (1, 2)),
                              [rand(1, 4)]),
    "broadcast_scalar": (lambda x: jnp.broadcast_to(x, (2, 3)) * x, [np.float64(1.5)]),
    "reshape": (lambda x: lax.reshape(x, (3, 4)), [rand(2, 6)]),
    "reshape_dimensions": (lambda x: lax.reshape(x, (6, 2), dimensions=(1, 0)), [rand(2, 6)]),
    "transpose": (lambda x: lax.transpose(x, (2, 0, 1)), [rand(2, 3, 4)]),
    "squeeze": (lambda x: lax.squeeze(x, (0, 2)), [rand(1, 3, 1)]),
    "expand_dims": (lambda x: lax.expand_dims(x, (0, 2)), [rand(3, 2)]),
    "concatenate": (lambda x, y: lax.concatenate([x, y, x], 1), [rand(2, 3), rand(2, 1, seed=1)]),
    "concatenate_const": (lambda x: jnp.concatenate([x, jnp.ones(2), x ** 2]), [rand(3)]),
    "stack": (lambda x, y: jnp.stack([x, y * x], axis=1), [rand(2, 3), rand(2, 3, seed=1)]),
    "unstack": (lambda x: shp.unstack(x, axis=1), [rand(2, 3)]),
    "tile": (lambda x: jnp.tile(x, (2, 3)), [rand(2, 2)]),
    "pad": (lambda x, v: lax.pad(x, v, [(1, -1, 2), (0, 2, 0)]), [rand(3, 2), np.float64(0.7)]),
    "pad_operand_only": (lambda x: lax.pad(x, 0.0, [(2, 1, 1)]) * 2.0, [rand(4)]),
    "pad_value_only": (lambda v: lax.pad(jnp.ones(3), v, [(1, 1, 1)]) * v, [np.float64(0.7)]),
    "rev": (lambda x: lax.rev(x, (0, 1)), [rand(2, 3)]),
    "slice": (lambda x: lax.slice(x, (1, 0), (3, 3)), [rand(4, 3)]),
    "slice_strided": (lambda x: lax.slice(x, (1, 0), (5, 3), (3, 2)), [rand(6, 3)]),
    "slice_empty": (lambda x: lax.slice(x, (2,), (2,)).sum() + x[0], [rand(4)]),
    "getitem_mix": (lambda x: x[::-2, 1:, None] ** 2, [rand(5, 3)]),
}

INDEXING_CASES = {
    "dynamic_slice": (lambda x: lax.dynamic_slice(x, (1, 2), (2, 2)), [rand(4, 5)]),
    "dynamic_slice_clamped": (lambda x: lax.dynamic_slice(x, (5, -9), (2, 2)), [rand(4, 5)]),
    "dynamic_update_slice": (lambda x, u: lax.dynamic_update_slice(x, u * u, (1, 3)),
                             [rand(4, 5), rand(2, 2, seed=1)]),
    "dynamic_update_slice_clamped": (lambda x, u: lax.dynamic_update_slice(x, u, (7,)),
                                     [rand(5), rand(2, seed=1)]),
    "dynamic_index_in_dim": (lambda x: lax.dynamic_index_in_dim(x, 1, 1, keepdims=False),
                             [rand(3, 4)]),
    "gather_repeats": (lambda x: x[IDX] ** 2, [rand(6)]),
    "gather_columns": (lambda x: x[:, jnp.array([2, 0, 2])], [rand(2, 3)]),
    "take_along_axis": (lambda x: jnp.take_along_axis(x, jnp.array([[1, 1], [0, 2]]), axis=1),
                        [rand(2, 3)]),
    "gather_fill": (lambda x: at(x)[jnp.array([1, 9, -8])].get(mode="fill", fill_value=0.0),
                    [rand(6)]),
    "gather_clip": (lambda x: at(x)[jnp.array([1, 9, -8])].get(mode="clip"), [rand(6)]),
    "scatter_add": (lambda x, u: at(x)[IDX].add(u * x[:4]), [rand(6), rand(4, seed=1)]),
    "scatter_add_rows": (lambda x, u: at(x)[jnp.array([1, 1])].add(u), [rand(3, 2),
                                                                        rand(2, 2, seed=1)]),
    "scatter_sub": (lambda x, u: lax.scatter_sub(
        x, IDX[:, None], u, lax.ScatterDimensionNumbers((), (0,), (0,))),
        [rand(6), rand(4, seed=1)]),
    "scatter_mul_unique": (lambda x, u: at(x)[UNIQ].multiply(u, unique_indices=True),
                           [rand(6), rand(3, seed=1)]),
    "scatter_mul_operand": (lambda x: at(x)[IDX].multiply(3.0) * x, [rand(6)]),
    "scatter_max": (lambda x, u: at(x)[IDX].max(u), [distinct(6), distinct(4, seed=1) + 0.05]),
    "scatter_min": (lambda x, u: at(x)[IDX].min(u), [distinct(6), distinct(4, seed=1) + 0.05]),
    "scatter_set_unique": (lambda x, u: at(x)[UNIQ].set(u * u, unique_indices=True),
                           [rand(6), rand(3, seed=1)]),
    "scatter_set_scalar_index": (lambda x, u: at(x)[1, 2].set(u) * x, [rand(3, 4),
                                                                         np.float64(0.3)]),
    "scatter_set_repeats": (lambda x, u: at(x)[IDX].set(u) * x, [rand(6), rand(4, seed=1)]),
    "scatter_set_rows": (lambda x, u: at(x)[jnp.array([2, 0, 2])].set(u),
                         [rand(3, 2), rand(3, 2, seed=1)]),
    "scatter_set_oob_dropped": (lambda x, u: at(x)[jnp.array([1, 9])].set(u),
                                [rand(4), rand(2, seed=1)]),
}

EXTRA_CASES = {
    "copy": (lambda x: extra.array_copy(x) * x, [rand(3)]),
    "cumsum": (lambda x: lax.cumsum(x, axis=1) * x, [rand(2, 4)]),
    "cumsum_reverse": (lambda x: lax.cumsum(x, axis=0, reverse=True), [rand(3, 2)]),
    "cumprod": (lambda x: lax.cumprod(x, axis=1), [rand(2, 5)]),
    "cumprod_reverse": (lambda x: lax.cumprod(x, reverse=True), [rand(6)]),
    "cummax": (lambda x: lax.cummax(x, axis=0), [distinct(5, 2)]),
    "cummin_reverse": (lambda x: lax.cummin(x, reverse=True), [distinct(7)]),
    "cumlogsumexp": (lambda x: lax.cumlogsumexp(x, axis=1), [rand(2, 5)]),
    "cumlogsumexp_reverse": (lambda x: lax.cumlogsumexp(x, reverse=True), [rand(4)]),
    "sort": (lambda x: lax.sort(x), [distinct(6)]),
    "sort_2d_axis0": (lambda x: lax.sort(x, dimension=0), [distinct(3, 4)]),
    "sort_key_val": (lambda k, v: lax.sort_key_val(k, v), [distinct(5), rand(5, seed=1)]),
    "sort_num_keys": (lambda x, y: lax.sort((jnp.floor(x), y, x * y), num_keys=2),
                      [distinct(6), distinct(6, seed=1)]),
    "jnp_sort": (lambda x: jnp.sort(x, axis=-1), [distinct(2, 3)]),
    "split": (lambda x: lax.split(x, (1, 3, 2), axis=0), [rand(6, 2)]),
    "jnp_split": (lambda x: jnp.split(x, 2, axis=1)[1] ** 2, [rand(2, 4)]),
}


def _ids(cases):
    return list(cases)


@pytest.mark.parametrize("name", _ids(SHAPE_CASES))
def test_shape_rules_numerically(x64, name):
    fn, args = SHAPE_CASES[name]
    check_grads(fn, args, order=2)


@pytest.mark.parametrize("name", _ids(INDEXING_CASES))
def test_indexing_rules_numerically(x64, name):
    fn, args = INDEXING_CASES[name]
    check_grads(fn, args, order=2)


@pytest.mark.parametrize("name", _ids(EXTRA_CASES))
def test_extra_rules_numerically(x64, name):
    fn, args = EXTRA_CASES[name]
    check_grads(fn, args, order=2)


@pytest.mark.parametrize("name", ["pad", "slice_strided", "tile", "concatenate"])
def test_shape_rules_float32(name):
    fn, args = SHAPE_CASES[name]
    check_grads(fn, [np.asarray(a, np.float32) for a in args], order=2, eps=1e-2)


@pytest.mark.parametrize("name", ["gather_repeats", "scatter_add", "dynamic_update_slice"])
def test_indexing_rules_float32(name):
    fn, args = INDEXING_CASES[name]
    check_grads(fn, [np.asarray(a, np.float32) for a in args], order=2, eps=1e-2)


@pytest.mark.parametrize("name", ["cumprod", "cumlogsumexp", "sort_key_val"])
def test_extra_rules_float32(name):
    fn, args = EXTRA_CASES[name]
    check_grads(fn, [np.asarray(a, np.float32) for a in args], order=2, eps=1e-2)


# ---------------------------------------------------------------------------------------------
# Exact values of a few gradients
# ---------------------------------------------------------------------------------------------

def test_gradient_values(x64):
    x = np.arange(6.0)
    np.testing.assert_array_equal(jax.grad(lambda x: x[1:3].sum())(x), [0, 1, 1, 0, 0, 0])
    np.testing.assert_array_equal(jax.grad(lambda x: x[IDX].sum())(x), [1, 0, 2, 0, 1, 0])
    np.testing.assert_array_equal(jax.grad(lambda x: at(x)[1].set(2.0).sum())(x),
                                  [1, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(jax.grad(lambda x: jnp.cumsum(x).sum())(x), [6, 5, 4, 3, 2, 1])
    np.testing.assert_array_equal(jax.grad(lambda x: jnp.sort(-x)[0])(x), [0, 0, 0, 0, 0, -1])
    np.testing.assert_array_equal(jax.grad(lambda x: jnp.tile(x, 3).sum())(x), [3] * 6)
    np.testing.assert_array_equal(
        jax.grad(lambda x: lax.pad(x, 0.0, [(1, -2, 1)]).sum())(x), [1, 1, 1, 1, 1, 0])
    # the padding value receives every position the operand does not fill
    np.testing.assert_array_equal(
        jax.grad(lambda v: lax.pad(jnp.ones(3), v, [(2, 1, 2)]).sum())(1.0), 7.0)
    # clamped windows: the window actually read gets the gradient
    np.testing.assert_array_equal(
        jax.grad(lambda x: lax.dynamic_slice(x, (5,), (2,)).sum())(x), [0, 0, 0, 0, 1, 1])
    # repeated scatter-set: the update that lands wins, the others get nothing
    g_x, g_u = jax.grad(lambda x, u: at(x)[IDX].set(u).sum(), argnums=(0, 1))(x, np.ones(4))
    np.testing.assert_array_equal(g_x, [0, 1, 0, 1, 0, 1])
    assert float(np.sum(g_u[1:3])) == 1.0 and g_u[0] == 1 and g_u[3] == 1
    # ties in scatter-max share the tangent
    g = jax.grad(lambda u: at(jnp.zeros(2))[jnp.array([0, 0])].max(u).sum())(np.array([1.0, 1.0]))
    np.testing.assert_allclose(g, [0.5, 0.5])


def test_scatter_gradient_errors(x64):
    x = np.arange(6.0)
    with pytest.raises(NotImplementedError, match="scatter_apply JVP not implemented"):
        jax.jvp(lambda x: at(x)[IDX].apply(jnp.sin), (x,), (x,))
    with pytest.raises(NotImplementedError, match="only implemented if `unique_indices=True`"):
        jax.grad(lambda u: at(x)[IDX].multiply(u).sum())(np.ones(4))


# ---------------------------------------------------------------------------------------------
# Transposition of the linear primitives: <ct, f(t)> == <f^T(ct), t>
# ---------------------------------------------------------------------------------------------

LINEAR_CASES = {
    "broadcast_in_dim": (lambda x: lax.broadcast_in_dim(x, (3, 5, 4), (1, 2)), [(1, 4)]),
    "reshape_dimensions": (lambda x: lax.reshape(x, (3, 4), dimensions=(1, 0)), [(2, 6)]),
    "transpose": (lambda x: lax.transpose(x, (1, 2, 0)), [(2, 3, 4)]),
    "squeeze": (lambda x: lax.squeeze(x, (1,)), [(3, 1)]),
    "concatenate": (lambda x, y: lax.concatenate([y, x, y], 0), [(2, 3), (1, 3)]),
    "stack": (lambda x, y: jnp.stack([x, y, x], axis=1), [(2, 3), (2, 3)]),
    "unstack": (lambda x: shp.unstack(x, axis=0), [(3, 2)]),
    "tile": (lambda x: jnp.tile(x, (3, 1, 2)), [(2, 1, 3)]),
    "pad": (lambda x, v: lax.pad(x, v, [(2, -1, 1), (-1, 0, 2)]), [(3, 4), ()]),
    "rev": (lambda x: lax.rev(x, (1,)), [(2, 3)]),
    "slice_strided": (lambda x: lax.slice(x, (1, 1), (6, 3), (2, 1)), [(7, 3)]),
    "dynamic_slice": (lambda x: lax.dynamic_slice(x, (2, 9), (2, 2)), [(5, 4)]),
    "dynamic_update_slice": (lambda x, u: lax.dynamic_update_slice(x, u, (1, -1)),
                             [(4, 4), (2, 3)]),
    "gather": (lambda x: x[IDX, 1:], [(5, 3)]),
    "scatter_add": (lambda x, u: at(x)[IDX].add(u), [(6,), (4,)]),
    "scatter_sub": (lambda x, u: lax.scatter_sub(x, IDX[:, None], u,
                                                 lax.ScatterDimensionNumbers((), (0,), (0,))),
                    [(6,), (4,)]),
    "scatter_set_unique": (lambda x, u: at(x)[UNIQ].set(u, unique_indices=True), [(6,), (3,)]),
    "scatter_set_scalar_index": (lambda x, u: at(x)[1].set(u), [(3, 2), (2,)]),
    "copy": (lambda x: extra.array_copy(x), [(3,)]),
    "cumsum": (lambda x: lax.cumsum(x, axis=1, reverse=True), [(2, 5)]),
    "split": (lambda x: lax.split(x, (2, 0, 1), axis=1), [(2, 3)]),
}


@pytest.mark.parametrize("name", _ids(LINEAR_CASES))
def test_transpose_rules(x64, name):
    fn, shapes = LINEAR_CASES[name]
    rng = np.random.RandomState(0)
    primals = [rng.randn(*s) for s in shapes]
    outs = fn(*primals)
    cts = jax.tree_util.tree_map(lambda o: rng.randn(*np.shape(o)), outs)
    transposed = jax.linear_transpose(fn, *primals)(cts)
    lhs = sum(np.vdot(np.asarray(c), np.asarray(o)) for c, o in zip(
        jax.tree_util.tree_leaves(cts), jax.tree_util.tree_leaves(outs)))
    rhs = sum(np.vdot(np.asarray(t), np.asarray(p)) for t, p in zip(
        jax.tree_util.tree_leaves(transposed), primals))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# Non-differentiable outputs, stop_gradient, random numbers
# ---------------------------------------------------------------------------------------------

def test_stop_gradient(x64):
    f = lambda x: lax.stop_gradient(x) * x  # noqa: E731
    assert float(jax.grad(f)(3.0)) == 3.0
    assert float(jax.grad(jax.grad(f))(3.0)) == 0.0
    # every level of differentiation stops at once (JVP tracers are peeled off first)
    g = lambda x: jax.grad(lambda y: lax.stop_gradient(x * y) * y)(x)  # noqa: E731
    assert float(g(2.0)) == 4.0 and float(jax.grad(g)(2.0)) == 0.0
    out, tangent = jax.jvp(lax.stop_gradient, (np.ones(3),), (np.ones(3),))
    np.testing.assert_array_equal(tangent, np.zeros(3))
    tree = lax.stop_gradient({"a": np.float64(1.0), "k": jax.random.key(0)})
    assert tree["k"].dtype == jax.random.key(0).dtype


def test_zero_tangent_primitives(x64):
    x = rand(3)
    out, t = jax.jvp(lambda x: lax.bitcast_convert_type(x, np.int64), (x,), (x,))
    assert t.dtype == dtypes.float0 and t.shape == (3,)
    out, t = jax.jvp(lambda x: lax.bitcast_convert_type(x, np.float64) * x, (x,), (x,))
    np.testing.assert_array_equal(t, x * x)
    assert float(jax.grad(lambda x: (lax.iota(np.float64, 3) * x).sum())(1.0)) == 3.0
    # the rules themselves: outputs as usual, symbolic zero tangents
    out, t = shp.iota_p.jvp((), (), dtype=np.dtype(np.int32), shape=(3,), dimension=0,
                            sharding=None)
    assert type(t) is ad.Zero and np.asarray(out).tolist() == [0, 1, 2]
    out, t = extra.bitcast_convert_type_p.jvp((x,), (x,), new_dtype=np.dtype(np.int64))
    assert type(t) is ad.Zero and t.aval.dtype == dtypes.float0


def test_random_primitives_have_zero_tangents(x64):
    key = jax.random.key(0)
    x = rand(3)
    g = jax.grad(lambda x: (x * jax.random.normal(jax.random.fold_in(key, 3), (3,))).sum())(x)
    np.testing.assert_allclose(g, jax.random.normal(jax.random.fold_in(key, 3), (3,)))
    hess = jax.grad(lambda x: jax.grad(
        lambda y: (y * y * jax.random.uniform(jax.random.split(key)[1], (3,))).sum())(x).sum())(x)
    np.testing.assert_allclose(hess, 2 * jax.random.uniform(jax.random.split(key)[1], (3,)))
    raw = jax.random.key_data(key)
    for prim, args, params in [
            (prng.random_bits_p, (key,), dict(bit_width=32, shape=(2,), impl=key.dtype._impl)),
            (prng.random_split_p, (key,), dict(shape=(2,), impl=key.dtype._impl)),
            (prng.random_unwrap_p, (key,), {}),
            (prng.random_wrap_p, (raw,), dict(impl=key.dtype._impl)),
            (prng.random_seed_p, (np.uint32(1),), dict(impl=key.dtype._impl))]:
        zeros = [ad.Zero.like(a) for a in args]
        out, t = prim.jvp(args, zeros, **params)
        assert type(t) is ad.Zero and t.aval.dtype == dtypes.float0, prim
        assert t.aval.shape == np.shape(out)
    outs, ts = prng.threefry2x32_p.jvp(
        [np.uint32(1)] * 4, [ad.Zero.like(np.uint32(1))] * 4)
    assert len(ts) == 2 and all(type(t) is ad.Zero for t in ts)


# ---------------------------------------------------------------------------------------------
# Printed jaxprs identical to JAX 0.10.2's
# ---------------------------------------------------------------------------------------------

RECORDS = {(r["name"], r["x64"]): r for r in json.load(
    open(os.path.join(HERE, "data", "ad_shape_jaxprs.json")))["records"]}


def _jaxpr_params():
    names = [name for name, _, _ in ad_shape_cases(jax, jnp, lax, np)]
    return [pytest.param(name, x64, id=f"{name}{'-x64' if x64 else ''}")
            for x64 in (False, True) for name in names]


@pytest.mark.parametrize("name,use_x64", _jaxpr_params())
def test_grad_jaxpr_matches_jax(name, use_x64):
    previous = jax.config.x64
    jax.config.update("jax_enable_x64", use_x64)
    try:
        fn, args = {n: (f, a) for n, f, a in ad_shape_cases(jax, jnp, lax, np)}[name]
        record = RECORDS[(name, use_x64)]
        try:
            got = str(jax.make_jaxpr(fn)(*args))
        except Exception as error:  # noqa: BLE001 - compared with JAX's recorded error
            assert "error" in record, f"{name}: {type(error).__name__}: {error}"
            assert (type(error).__name__, str(error)) == (record["error"]["type"],
                                                          record["error"]["message"])
            return
        assert "error" not in record, f"JAX raised {record['error']}"
        assert got == record["jaxpr"]
    finally:
        jax.config.update("jax_enable_x64", previous)
