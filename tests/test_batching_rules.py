"""The batch rules of the elementwise, reduction, dot_general and PRNG primitives.

(1) every entry of tests/op_table.py for these primitives: vmap over a batch of inputs, with the
    batch axes at the front, at the end, in the middle, mixed, and with unbatched (None)
    operands, equals the stack of the unbatched results (a Python loop), eagerly and under jit;
    vmap of vmap likewise;
(2) make_jaxpr of vmapped functions prints exactly what JAX 0.10.2 printed
    (tests/data/vmap_jaxprs.json, recorded by tests/oracle/record_vmap.py);
(3) vmap composes with grad both ways (and so batches add_any);
(4) vmap over keys draws what a loop over the keys draws, and what JAX drew (recorded values).
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable, Sequence

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core.primitive import Primitive
from pyjax._src.primitives import dot, elementwise, reductions

from op_table import DTYPES, OPS, OpCase, make_args, x64_mode

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "oracle"))
import record_vmap  # noqa: E402

DATA = json.load(open(os.path.join(HERE, "data", "vmap_jaxprs.json")))

#: the primitives whose rules this file checks
PRIMS = {v.name for m in (elementwise, reductions, dot) for v in vars(m).values()
         if isinstance(v, Primitive)} | {"add_any"}
CASES = [c for c in OPS if c.prim in PRIMS]

#: batch size of the op-table runs
B = 3
#: dtypes tried first (one per kind); the first two kinds an entry accepts are run
PREFERENCE = ("float32", "int32", "bool", "complex64", "uint32", "int8", "uint8", "int16",
              "uint16", "float16", "bfloat16", "float64", "int64", "uint64", "complex128")


def _dtypes(case: OpCase) -> list[str]:
    picked: list[str] = []
    for name in sorted(case.dtypes, key=PREFERENCE.index):
        if all(DTYPES[name].kind != DTYPES[p].kind for p in picked):
            picked.append(name)
    return picked[:2]


def _axes_configs(shapes: Sequence[tuple[int, ...]]) -> list[tuple]:
    """in_axes to try: all front, all last, all in the middle, alternating front/last, and each
    operand alone batched (the others None), then each operand alone unbatched."""
    n = len(shapes)
    last = tuple(len(s) for s in shapes)
    middle = tuple(min(1, len(s)) for s in shapes)
    configs = [(0,) * n, last, middle]
    if n > 1:
        configs.append(tuple(0 if i % 2 else len(s) for i, s in enumerate(shapes)))
        configs += [tuple(last[i] if i == j else None for i in range(n)) for j in range(n)]
        if n > 2:
            configs += [tuple(None if i == j else middle[i] for i in range(n)) for j in range(n)]
    return list(dict.fromkeys(configs))


def _batched_args(case: OpCase, dtype: str, shapes: tuple, axes: tuple, salt: int = 0
                  ) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
    """Per-example operands (unbatched ones shared) and the stacked operands."""
    examples = [make_args(case, dtype, shapes, salt=salt + k) for k in range(B)]
    for k in range(1, B):
        examples[k] = [e if a is not None else examples[0][i]
                       for i, (e, a) in enumerate(zip(examples[k], axes))]
    stacked = [examples[0][i] if a is None else np.stack([ex[i] for ex in examples], axis=a)
               for i, a in enumerate(axes)]
    return stacked, examples


def _assert_same(got: Any, want: np.ndarray, case: OpCase, what: str) -> None:
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        rtol, atol = case.tolerance(want.dtype.name)
        np.testing.assert_allclose(got.astype(np.complex128 if want.dtype.kind == "c" else
                                              np.float64),
                                   want.astype(np.complex128 if want.dtype.kind == "c" else
                                               np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def _loop(case: OpCase, examples: list[list[np.ndarray]]) -> np.ndarray:
    return np.stack([np.asarray(case.fn(*ex)) for ex in examples])


# ---------------------------------------------------------------------------------------------
# (1) the op table
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_vmap_equals_loop(case: OpCase) -> None:
    for dtype in _dtypes(case):
        with x64_mode(case.needs_x64(dtype)):
            for shapes in case.shapes:
                configs = _axes_configs(shapes)
                for axes in configs:
                    stacked, examples = _batched_args(case, dtype, shapes, axes)
                    want = _loop(case, examples)
                    what = f"{case.name} {dtype} {shapes} in_axes={axes}"
                    _assert_same(pyjax.vmap(case.fn, in_axes=axes)(*stacked), want, case, what)
                    if axes == configs[-1]:
                        _assert_same(pyjax.jit(pyjax.vmap(case.fn, in_axes=axes))(*stacked),
                                     want, case, "jit " + what)
                    # out_axes: the batch axis of the result moved back to where it came from
                    if axes == configs[0] and want.ndim > 1:
                        out = pyjax.vmap(case.fn, in_axes=axes, out_axes=-1)(*stacked)
                        _assert_same(out, np.moveaxis(want, 0, -1), case, "out_axes " + what)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_vmap_of_vmap_equals_loop(case: OpCase) -> None:
    """Rules applied to batched values (the inner rule's operands are outer batch tracers)."""
    dtype = _dtypes(case)[0]
    shapes = max(case.shapes, key=lambda s: sum(map(len, s)))
    n = len(shapes)
    inner = tuple(len(s) if i % 2 else 0 for i, s in enumerate(shapes))
    outer = tuple(None if i == n - 1 and n > 1 else 1 for i in range(n))
    with x64_mode(case.needs_x64(dtype)):
        # outer examples, each a batch of inner examples
        rows = [_batched_args(case, dtype, shapes, inner, salt=10 * j) for j in range(2)]
        if n > 1:  # the last operand is unbatched by the outer vmap: one value for all rows
            rows = [([*s[:-1], rows[0][0][-1]], [[*e[:-1], rows[0][1][k][-1]]
                                                 for k, e in enumerate(ex)])
                    for s, ex in rows]
        stacked = [rows[0][0][i] if a is None else np.stack([r[0][i] for r in rows], axis=a)
                   for i, a in enumerate(outer)]
        want = np.stack([_loop(case, ex) for _, ex in rows])
        got = pyjax.vmap(pyjax.vmap(case.fn, in_axes=inner), in_axes=outer)(*stacked)
        _assert_same(got, want, case, f"{case.name} {dtype} {shapes}")


def test_every_primitive_here_is_covered() -> None:
    """Each primitive whose rule this file claims has an op-table entry and a batch rule."""
    from pyjax._src.core.primitive import registry
    assert PRIMS <= {c.prim for c in CASES}
    assert all(registry[p].batch is not None for p in PRIMS)


def test_axes_configs_cover_front_end_and_none() -> None:
    configs = _axes_configs(((2, 3), ()))
    assert (0, 0) in configs and (2, 0) in configs and (2, None) in configs
    assert (None, 0) in configs and (1, 0) in configs


# ---------------------------------------------------------------------------------------------
# (2) printed jaxprs against JAX
# ---------------------------------------------------------------------------------------------

RECORDS = {r["name"]: r for r in DATA["records"]}


@pytest.mark.parametrize("name,fn,args", [
    pytest.param(name, fn, args, id=name)
    for name, fn, args in record_vmap.vmap_cases(pyjax, jnp, lax, np)])
def test_vmap_jaxpr_matches_jax(name: str, fn: Callable, args: Sequence[Any]) -> None:
    assert str(pyjax.make_jaxpr(fn)(*args)) == RECORDS[name]["jaxpr"]


def test_reduction_axes_are_numpy_ints_as_in_jax() -> None:
    jaxpr = pyjax.make_jaxpr(pyjax.vmap(lambda a: lax.reduce_sum(a, (0,)), in_axes=1))(
        np.ones((2, 3), np.float32))
    assert jaxpr.jaxpr.eqns[0].params["axes"] == (0,)
    assert type(jaxpr.jaxpr.eqns[0].params["axes"][0]) is np.int64


# ---------------------------------------------------------------------------------------------
# (3) vmap and grad
# ---------------------------------------------------------------------------------------------

def _f(w: Any, x: Any) -> Any:
    """A small network: dot_general, broadcasting, tanh, select, reductions, integer_pow."""
    h = jnp.tanh(jnp.dot(x, w) + 0.5)
    h = jnp.where(h > 0, h, 0.1 * h)
    return jnp.sum(h ** 2) + jnp.max(x) * lax.clamp(-1.0, jnp.mean(w), 1.0)


W = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
XS = np.linspace(-2, 2, 30, dtype=np.float32).reshape(5, 2, 3)


def test_vmap_of_grad_equals_loop() -> None:
    per_example = pyjax.vmap(pyjax.grad(_f), in_axes=(None, 0))(W, XS)
    want = np.stack([np.asarray(pyjax.grad(_f)(W, x)) for x in XS])
    np.testing.assert_allclose(per_example, want, rtol=1e-5, atol=1e-6)
    wrt_x = pyjax.vmap(pyjax.grad(_f, argnums=1), in_axes=(None, 0))(W, XS)
    want = np.stack([np.asarray(pyjax.grad(_f, argnums=1)(W, x)) for x in XS])
    np.testing.assert_allclose(wrt_x, want, rtol=1e-5, atol=1e-6)


def test_grad_of_vmap_equals_sum_of_grads() -> None:
    loss = lambda w: jnp.sum(pyjax.vmap(_f, in_axes=(None, 0))(w, XS))  # noqa: E731
    want = sum(np.asarray(pyjax.grad(_f)(W, x)) for x in XS)
    np.testing.assert_allclose(pyjax.grad(loss)(W), want, rtol=1e-5, atol=1e-5)
    # and with the batch axis last
    loss_t = lambda w: jnp.sum(  # noqa: E731
        pyjax.vmap(_f, in_axes=(None, 2))(w, np.moveaxis(XS, 0, 2)))
    np.testing.assert_allclose(pyjax.grad(loss_t)(W), want, rtol=1e-5, atol=1e-5)


def test_per_example_jacobian_and_add_any_batch_axes() -> None:
    """vmap(grad) of a function using its input twice sums cotangents with add_any; with the
    two uses batched differently add_any's rule moves or broadcasts one of them."""
    f = lambda a, b: jnp.sum(jnp.sin(a) * a + b * a)  # noqa: E731
    a = np.linspace(0.1, 1.0, 12, dtype=np.float32).reshape(4, 3)
    for in_axes in ((0, 0), (0, None), (1, 0)):
        args = (a.T.copy() if in_axes[0] == 1 else a, a[0] if in_axes[1] is None else a)
        got = pyjax.vmap(pyjax.grad(f, argnums=(0, 1)), in_axes=in_axes)(*args)
        ex = [(args[0][:, k] if in_axes[0] == 1 else args[0][k],
               args[1] if in_axes[1] is None else args[1][k]) for k in range(4)]
        for i in range(2):
            want = np.stack([np.asarray(pyjax.grad(f, argnums=(0, 1))(*e)[i]) for e in ex])
            np.testing.assert_allclose(got[i], want, rtol=1e-6, atol=1e-6)
    from pyjax._src.transforms.ad import add_any_p
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = x * 10 + 1

    def place(v: np.ndarray, a: Any) -> np.ndarray:
        return v[0] if a is None else np.moveaxis(v, 0, a)

    for axes in ((0, 0), (0, 1), (1, 0), (None, 1), (1, None), (None, 0)):
        got = pyjax.vmap(add_any_p.bind, in_axes=axes)(place(x, axes[0]), place(y, axes[1]))
        want = np.stack([(x[0] if axes[0] is None else x[k]) + (y[0] if axes[1] is None else
                                                                 y[k]) for k in range(2)])
        np.testing.assert_array_equal(got, want)


def test_jit_of_vmap_of_grad() -> None:
    fn = pyjax.jit(pyjax.vmap(pyjax.grad(_f), in_axes=(None, 0)))
    want = np.stack([np.asarray(pyjax.grad(_f)(W, x)) for x in XS])
    np.testing.assert_allclose(fn(W, XS), want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# (4) keys
# ---------------------------------------------------------------------------------------------

RANDOM = {r["name"]: r for r in DATA["random"]}


@pytest.mark.parametrize("name,thunk", [pytest.param(n, t, id=n)
                                        for n, t in record_vmap.random_cases(pyjax, np)])
def test_vmap_over_keys_matches_jax(name: str, thunk: Callable) -> None:
    record = RANDOM[name]
    got = np.asarray(thunk())
    want = np.array(record["value"], record["dtype"]).reshape(record["shape"])
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)
    else:
        np.testing.assert_array_equal(got, want)


KEYS = pyjax.random.split(pyjax.random.key(7), 3)


@pytest.mark.parametrize("draw", [
    pytest.param(lambda k: pyjax.random.normal(k, (2, 3)), id="normal"),
    pytest.param(lambda k: pyjax.random.bits(k, (4,), np.uint8), id="bits_uint8"),
    pytest.param(lambda k: pyjax.random.split(k, (2, 2)), id="split"),
    pytest.param(lambda k: pyjax.random.fold_in(k, 3), id="fold_in"),
    pytest.param(lambda k: pyjax.random.gamma(k, np.array([0.3, 2.0], np.float32)), id="gamma"),
    pytest.param(lambda k: pyjax.random.poisson(k, np.array([1.0, 30.0], np.float32)),
                 id="poisson"),
    pytest.param(lambda k: pyjax.random.key_data(k), id="key_data"),
])
def test_vmap_over_keys_equals_loop(draw: Callable) -> None:
    from pyjax._src.random.keys import KeyTy

    def data(x: Any) -> np.ndarray:
        return np.asarray(pyjax.random.key_data(x) if isinstance(x.dtype, KeyTy) else x)
    want = np.stack([data(draw(k)) for k in KEYS])
    np.testing.assert_array_equal(data(pyjax.vmap(draw)(KEYS)), want)
    # a grid of keys, the outer vmap along its trailing axis (so the inner one sees keys
    # batched at axis 1 of the physical data's leading axes)
    grid = pyjax.random.split(pyjax.random.key(7), (2, 3))
    traced_data = lambda k: (lambda x: pyjax.random.key_data(x)  # noqa: E731
                             if isinstance(x.dtype, KeyTy) else x)(draw(k))
    got = np.asarray(pyjax.vmap(pyjax.vmap(traced_data), in_axes=1)(grid))
    want = np.stack([np.stack([data(draw(grid[i, j])) for i in range(2)]) for j in range(3)])
    np.testing.assert_array_equal(got, want)


def test_vmap_of_wrap_fold_in_and_threefry() -> None:
    from pyjax._src.primitives.prng import random_fold_in, threefry2x32
    data = np.asarray(pyjax.random.key_data(KEYS))
    wrapped = pyjax.vmap(pyjax.random.wrap_key_data, in_axes=1, out_axes=0)(data.T.copy())
    np.testing.assert_array_equal(pyjax.random.key_data(wrapped), data)
    x = np.arange(12, dtype=np.uint32).reshape(3, 4)
    k1, k2 = data[:, 0], data[:, 1]
    got = pyjax.vmap(threefry2x32, in_axes=(0, 0, 0, None))(k1, k2, x, x[0])
    for i in range(3):
        want = threefry2x32(k1[i], k2[i], x[i], x[0])
        np.testing.assert_array_equal(got[0][i], want[0])
        np.testing.assert_array_equal(got[1][i], want[1])
    # per-example scalar keys against unbatched messages: keys get a trailing size-1 axis, and
    # keys batched along axis 1 of a grid move to the front (on their key data)
    msgs = np.arange(5, dtype=np.uint32)
    got = pyjax.random.key_data(pyjax.vmap(lambda k: random_fold_in(k, msgs))(KEYS))
    want = np.stack([pyjax.random.key_data(random_fold_in(k, msgs)) for k in KEYS])
    np.testing.assert_array_equal(got, want)
    grid = pyjax.random.split(pyjax.random.key(3), (2, 3))
    got = pyjax.vmap(lambda k: pyjax.random.key_data(random_fold_in(k, msgs[:2])), in_axes=1)(
        grid)
    want = np.stack([pyjax.random.key_data(random_fold_in(grid[:, j], msgs[:2]))
                     for j in range(3)])
    np.testing.assert_array_equal(got, want)
