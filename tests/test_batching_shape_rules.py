"""The batch rules of the shape, indexing, cumulative, sort and call primitives.

(1) every tests/op_table.py entry of these primitives: vmap with the batch axes at the front, at
    the end and mixed with unbatched (None) operands equals a Python loop of the unbatched
    function; likewise jit of vmap, vmap of jit and vmap of vmap;
(2) make_jaxpr of vmapped functions prints what JAX 0.10.2 printed (x64 off and on), recorded
    by tests/oracle/record_vmap_shape.py into tests/data/vmap_shape_jaxprs.json;
(3) the call primitives: jit stays a `jit` equation (its batched body cached per function, as
    JAX caches it), checkpoint and custom_jvp/custom_vjp keep their rules under vmap and compose
    with grad, and collectives inside a jitted body see the vmap axis.
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Sequence

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src.core.primitive import Primitive, registry
from pyjax._src.primitives import extra, indexing
from pyjax._src.primitives import shape as shp
from pyjax._src.transforms.jit import jit_p

from op_table import DTYPES, OPS, OpCase, make_args, x64_mode

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "oracle"))
from record_vmap_shape import vmap_shape_cases  # noqa: E402

#: the primitives whose batch rules this file checks (iota has no operands: never batched)
PRIMS = {v.name for m in (shp, indexing, extra) for v in vars(m).values()
         if isinstance(v, Primitive)} - {"iota"}
CASES = [c for c in OPS if c.prim in PRIMS]
B = 3  # batch size
PREFERENCE = ("float32", "int32", "bool", "uint8", "int8", "float16", "complex64", "bfloat16",
              "uint32", "int16", "uint16", "float64", "int64", "uint64", "complex128")


def _dtype(case: OpCase) -> str:
    return min(case.dtypes, key=PREFERENCE.index)


def _configs(shapes: Sequence[tuple[int, ...]]) -> list[tuple]:
    """in_axes to try: all at the front, all at the end, and, with several operands, each
    operand alone batched (at the end) and each alone unbatched."""
    n = len(shapes)
    end = tuple(len(s) for s in shapes)
    configs = [(0,) * n, end]
    if n > 1:
        configs += [tuple(end[i] if i == j else None for i in range(n)) for j in range(n)]
        configs += [tuple(None if i == j else 0 for i in range(n)) for j in range(n)]
    return list(dict.fromkeys(configs))


def _batch(case: OpCase, dtype: str, shapes: tuple, axes: tuple, salt: int = 0
           ) -> tuple[list, list[list]]:
    """(stacked operands, per-example operands): unbatched operands are shared."""
    examples = [make_args(case, dtype, shapes, salt=salt + k) for k in range(B)]
    examples = [[ex[i] if a is not None else examples[0][i] for i, a in enumerate(axes)]
                for ex in examples]
    stacked = [examples[0][i] if a is None else np.stack([ex[i] for ex in examples], axis=a)
               for i, a in enumerate(axes)]
    return stacked, examples


def _leaves(out: Any, case: OpCase) -> list[np.ndarray]:
    return [np.asarray(o) for o in (out if case.multiple else [out])]


def _loop(case: OpCase, examples: list[list]) -> list[np.ndarray]:
    """The unbatched function on each example, results stacked on a new leading axis."""
    per = [_leaves(case.fn(*ex), case) for ex in examples]
    return [np.stack(parts) for parts in zip(*per)]


#: jnp functions JAX jits run op by op when pyjax calls them eagerly (the loop), but batched
#: they run compiled, where a*b + c is one fused multiply-add as XLA makes it: the two may
#: differ by that one rounding
FUSED_WHEN_BATCHED = {"jnp_quantile_linear"}


def _check(got: Any, want: list[np.ndarray], case: OpCase, what: str) -> None:
    got = _leaves(got, case)
    if case.name in FUSED_WHEN_BATCHED:
        for g, w in zip(got, want):
            eps = np.finfo(w.dtype).eps  # one rounding of the interpolation's terms
            np.testing.assert_allclose(g, w, rtol=eps, atol=4 * eps * np.abs(w).max(),
                                       err_msg=what)
        return
    assert len(got) == len(want), what
    for g, w in zip(got, want):
        assert (g.dtype, g.shape) == (w.dtype, w.shape), (what, g.dtype, g.shape, w.shape)
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w, err_msg=what)
        else:
            as_bytes = lambda a: np.ascontiguousarray(a).view(np.uint8)  # noqa: E731
            np.testing.assert_array_equal(as_bytes(g), as_bytes(w), err_msg=what)


# ---------------------------------------------------------------------------------------------
# (1) the op table
# ---------------------------------------------------------------------------------------------

def test_every_primitive_has_a_rule_and_an_entry() -> None:
    assert PRIMS <= {c.prim for c in CASES}, PRIMS - {c.prim for c in CASES}
    missing = sorted(p for p in PRIMS if registry[p].batch is None)
    assert not missing, missing


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_vmap_equals_loop(case: OpCase) -> None:
    """Bitwise equal: these primitives move data (cumulative reductions accumulate in the same
    order per example)."""
    dtype = _dtype(case)
    with x64_mode(case.needs_x64(dtype)):
        for shapes in case.shapes:
            configs = _configs(shapes)
            for axes in configs:
                stacked, examples = _batch(case, dtype, shapes, axes)
                want = _loop(case, examples)
                what = f"{case.name} {dtype} {shapes} in_axes={axes}"
                _check(jax.vmap(case.fn, in_axes=axes)(*stacked), want, case, what)
            # the last configuration again under jit of vmap and vmap of jit
            _check(jax.jit(jax.vmap(case.fn, in_axes=axes))(*stacked), want, case,
                   "jit(vmap) " + what)
            _check(jax.vmap(jax.jit(case.fn), in_axes=axes)(*stacked), want, case,
                   "vmap(jit) " + what)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_vmap_of_vmap_equals_loop(case: OpCase) -> None:
    """The inner rule sees operands already batched by the outer vmap (outer axis at the end,
    inner at the front; the last operand unbatched by the outer vmap when there are several)."""
    dtype = _dtype(case)
    shapes = max(case.shapes, key=lambda s: sum(map(len, s)))
    n = len(shapes)
    inner = (0,) * n
    with x64_mode(case.needs_x64(dtype)):
        rows = [_batch(case, dtype, shapes, inner, salt=10 * j) for j in range(2)]
        if n > 1:  # one shared inner batch of the last operand
            rows = [([*s[:-1], rows[0][0][-1]],
                     [[*e[:-1], rows[0][1][k][-1]] for k, e in enumerate(ex)])
                    for s, ex in rows]
        outer = tuple(None if (n > 1 and i == n - 1) else len(s) + 1
                      for i, s in enumerate(shapes))
        stacked = [rows[0][0][i] if a is None else np.stack([r[0][i] for r in rows], axis=a)
                   for i, a in enumerate(outer)]
        want = [np.stack(parts) for parts in zip(*[_loop(case, ex) for _, ex in rows])]
        got = jax.vmap(jax.vmap(case.fn, in_axes=inner), in_axes=outer)(*stacked)
        _check(got, want, case, f"{case.name} {dtype} {shapes}")


def test_out_axes_and_unbatched_results() -> None:
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    out = jax.vmap(lambda a: lax.transpose(a, (1, 0)), in_axes=1, out_axes=2)(x)
    np.testing.assert_array_equal(out, np.transpose(x, (2, 0, 1)))
    # the unbatched operand of a concatenate is broadcast along the batch
    out = jax.vmap(lambda a, b: jnp.concatenate([b, a]), in_axes=(0, None))(x[0], x[1, 0])
    np.testing.assert_array_equal(out, np.concatenate([np.broadcast_to(x[1, 0], (3, 4)),
                                                       x[0]], axis=1))


# ---------------------------------------------------------------------------------------------
# (2) printed jaxprs identical to JAX 0.10.2's
# ---------------------------------------------------------------------------------------------

RECORDS = {(r["name"], r["x64"]): r for r in json.load(
    open(os.path.join(HERE, "data", "vmap_shape_jaxprs.json")))["records"]}
NAMES = [name for name, _, _ in vmap_shape_cases(jax, jnp, lax, np)]


@pytest.mark.parametrize("name,use_x64", [
    pytest.param(name, x64, id=f"{name}{'-x64' if x64 else ''}")
    for x64 in (False, True) for name in NAMES])
def test_vmap_jaxpr_matches_jax(name: str, use_x64: bool) -> None:
    with x64_mode(use_x64):
        fn, args = {n: (f, a) for n, f, a in vmap_shape_cases(jax, jnp, lax, np)}[name]
        assert str(jax.make_jaxpr(fn)(*args)) == RECORDS[(name, use_x64)]["jaxpr"]


def test_dimension_numbers_keep_numpy_ints() -> None:
    jaxpr = jax.make_jaxpr(jax.vmap(lambda x: x[jnp.array([0, 2])], in_axes=1))(
        np.ones((3, 2), np.float32)).jaxpr
    dn = jaxpr.eqns[-1].params["dimension_numbers"]
    assert dn.offset_dims == (0,) and type(dn.offset_dims[0]) is int
    assert type(dn.collapsed_slice_dims[0]) is np.int64


# ---------------------------------------------------------------------------------------------
# (3) call primitives
# ---------------------------------------------------------------------------------------------

M = np.arange(12, dtype=np.float32).reshape(3, 4) / 4


def test_jit_stays_a_call_and_its_batched_body_is_cached() -> None:
    f = jax.jit(lambda x: jnp.cumsum(x[::-1]))
    jaxpr = jax.make_jaxpr(jax.vmap(f, in_axes=1, out_axes=1))(M).jaxpr
    assert [e.primitive for e in jaxpr.eqns] == [jit_p]
    body = jaxpr.eqns[0].params["jaxpr"]
    again = jax.make_jaxpr(jax.vmap(f, in_axes=1, out_axes=1))(M).jaxpr.eqns[0].params["jaxpr"]
    assert again is body
    # another axis or size: another body
    other = jax.make_jaxpr(jax.vmap(f))(M).jaxpr.eqns[0].params["jaxpr"]
    assert other is not body
    np.testing.assert_array_equal(jax.vmap(f, in_axes=1)(M),
                                  np.stack([np.cumsum(c[::-1]) for c in M.T]))


def test_jit_with_unbatched_and_batched_outputs() -> None:
    @jax.jit
    def f(x, y):
        return x[1:], y * 2.0, jnp.ones(2)

    a, b, c = jax.vmap(f, in_axes=(0, None))(M, np.float32(3.0))
    np.testing.assert_array_equal(a, M[:, 1:])
    np.testing.assert_array_equal(b, np.full(3, 6.0, np.float32))
    np.testing.assert_array_equal(c, np.ones((3, 2), np.float32))
    # nested: vmap of vmap of jit, jit of vmap of jit
    t = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    g = jax.jit(lambda x: lax.rev(x, (0,)))
    np.testing.assert_array_equal(jax.vmap(jax.vmap(g))(t), t[:, :, ::-1])
    np.testing.assert_array_equal(jax.jit(jax.vmap(g, in_axes=2, out_axes=2))(t), t[::-1])


def test_grad_through_vmap_of_jit_and_back() -> None:
    f = jax.jit(lambda x: (lax.cumsum(x) * x[::-1]).sum())
    per_example = jax.vmap(jax.grad(f))(M)
    loop = np.stack([np.asarray(jax.grad(f)(row)) for row in M])
    np.testing.assert_allclose(per_example, loop, rtol=1e-6)
    total = jax.grad(lambda m: jax.vmap(f)(m).sum())(M)
    np.testing.assert_allclose(total, loop, rtol=1e-6)


def test_collective_inside_jit_sees_the_vmap_axis() -> None:
    f = jax.jit(lambda x: x - jax.lax.psum(x, "i") / 3)
    out = jax.vmap(f, axis_name="i")(M)
    np.testing.assert_allclose(out, M - M.sum(0) / 3, rtol=1e-6)
    # an unbatched argument still reaches the collective along the axis
    out = jax.vmap(lambda _: f(np.float32(2.0)), axis_name="i")(M)
    np.testing.assert_allclose(out, np.full(3, 2.0 - 2.0, np.float32))


def test_checkpoint_under_vmap() -> None:
    f = jax.checkpoint(lambda x: jnp.sin(x[::-1]) * x)
    out = jax.vmap(f, in_axes=1, out_axes=1)(M)
    np.testing.assert_allclose(out, np.sin(M[::-1]) * M, rtol=1e-6)
    jaxpr = jax.make_jaxpr(jax.vmap(f, in_axes=1))(M).jaxpr
    assert jaxpr.eqns[-1].primitive.name == "remat2"
    g = jax.vmap(jax.grad(lambda x: f(x).sum()))(M)
    want = np.stack([np.asarray(jax.grad(lambda x: f(x).sum())(r)) for r in M])
    np.testing.assert_allclose(g, want, rtol=1e-6)
    # a body closing over a batched value
    out = jax.vmap(lambda x: jax.checkpoint(lambda y: y * x)(np.float32(2.0)))(M)
    np.testing.assert_array_equal(out, M * 2)
    g = jax.vmap(lambda x: jax.grad(
        lambda y: jax.checkpoint(lambda z: (jnp.sin(z) * x).sum())(y))(x))(M)
    np.testing.assert_allclose(g, np.cos(M) * M, rtol=1e-6)


@jax.custom_jvp
def _softplus(x):
    return jnp.log1p(jnp.exp(x))


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
    x, = primals
    return _softplus(x), tangents[0] * 10.0   # a deliberately unusual rule


@jax.custom_vjp
def _scaled(x, y):
    return x * y


def _scaled_fwd(x, y):
    return _scaled(x, y), (x, y)


def _scaled_bwd(res, g):
    x, y = res
    return (g * y * 10.0, (g * x).sum(0) if np.ndim(x) > np.ndim(y) else g * x)


_scaled.defvjp(_scaled_fwd, _scaled_bwd)


def test_custom_jvp_under_vmap_keeps_its_rule() -> None:
    np.testing.assert_allclose(jax.vmap(_softplus, in_axes=1, out_axes=1)(M),
                               np.log1p(np.exp(M)), rtol=1e-6)
    g = jax.vmap(jax.grad(lambda x: _softplus(x).sum()), in_axes=1)(M)
    np.testing.assert_allclose(g, np.full((4, 3), 10.0), rtol=1e-6)
    g = jax.grad(lambda m: jax.vmap(_softplus, in_axes=1)(m).sum())(M)
    np.testing.assert_allclose(g, np.full((3, 4), 10.0), rtol=1e-6)
    _, t = jax.jvp(jax.vmap(_softplus), (M,), (np.ones_like(M),))
    np.testing.assert_allclose(t, np.full((3, 4), 10.0), rtol=1e-6)
    eqn = jax.make_jaxpr(jax.vmap(_softplus))(M).jaxpr.eqns[0]
    assert eqn.primitive.name == "custom_jvp_call" and str(eqn.params["jvp"]) == "_softplus_jvp"


def test_custom_vjp_under_vmap_keeps_its_rule() -> None:
    y = np.float32(3.0)
    np.testing.assert_allclose(jax.vmap(_scaled, in_axes=(0, None))(M, y), M * 3, rtol=1e-6)
    # the cotangent of the unbatched y is summed over the batch
    gx, gy = jax.grad(lambda m, s: jax.vmap(_scaled, in_axes=(0, None))(m, s).sum(),
                      argnums=(0, 1))(M, y)
    np.testing.assert_allclose(gx, np.full((3, 4), 30.0), rtol=1e-6)
    np.testing.assert_allclose(gy, M.sum(), rtol=1e-6)
    g = jax.vmap(jax.grad(lambda x: _scaled(x, y).sum()))(M)
    np.testing.assert_allclose(g, np.full((3, 4), 30.0), rtol=1e-6)
    eqn = jax.make_jaxpr(jax.vmap(_scaled, in_axes=(1, None)))(M, y).jaxpr.eqns[0]
    assert eqn.primitive.name == "custom_vjp_call"
    assert (str(eqn.params["fwd"]), str(eqn.params["bwd"])) == ("_scaled_fwd", "_scaled_bwd")


def test_calls_closing_over_batched_values() -> None:
    two = np.float32(2.0)
    # jit: the closed-over tracer is an argument of the call
    np.testing.assert_array_equal(jax.vmap(lambda x: jax.jit(lambda y: y * x)(two))(M), 2 * M)

    # custom_jvp: its body cannot be staged apart from the trace, so it is batched inline
    def outer(x: Any, s: Any) -> Any:
        @jax.custom_jvp
        def g(y: Any) -> Any:
            return y * x
        g.defjvp(lambda p, t: (g(p[0]), t[0] * x * 10))
        return g(s)

    np.testing.assert_array_equal(jax.vmap(outer, in_axes=(0, None))(M, two), 2 * M)
    g = jax.vmap(jax.grad(lambda x, s: outer(x, s).sum(), argnums=1), in_axes=(0, None))(M, two)
    np.testing.assert_allclose(g, M.sum(1) * 10, rtol=1e-6)


def test_linearized_custom_vjp_fails_under_vmap_as_in_jax() -> None:
    _, lin = jax.linearize(lambda x: _scaled(x, np.float32(2.0)), M[0])
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jax.vmap(lin)(M)


@pytest.mark.parametrize("prim", ["cumprod", "cummax", "cumlogsumexp"])
def test_vmap_of_scan_jvps(prim: str) -> None:
    """The cumulative reductions differentiate through associative_scan (slices, pads,
    concatenates): batched, those are the shape rules above."""
    fn = getattr(lax, prim)
    x = (np.arange(15, dtype=np.float32).reshape(3, 5) * 0.37) % 1.3 + 0.2
    _, t = jax.jvp(jax.vmap(lambda r: fn(r, reverse=True), in_axes=1, out_axes=1), (x,),
                   (np.ones_like(x),))
    loop = np.stack([np.asarray(jax.jvp(lambda r: fn(r, reverse=True), (c,),
                                        (np.ones_like(c),))[1]) for c in x.T], axis=1)
    np.testing.assert_allclose(t, loop, rtol=1e-6)
    g = jax.vmap(jax.grad(lambda r: (fn(r) * r).sum()))(x)
    loop = np.stack([np.asarray(jax.grad(lambda r: (fn(r) * r).sum())(row)) for row in x])
    np.testing.assert_allclose(g, loop, rtol=1e-6)


def test_call_rules_without_a_trace() -> None:
    """`batch` (what a census sees) works without the trace: size from the operands."""
    closed = jax.make_jaxpr(lambda y: lax.rev(y, (0,)))(M[0])
    (out,), (dim,) = jit_p.batch([M.T], [1], jaxpr=closed, name="f")
    np.testing.assert_array_equal(np.moveaxis(np.asarray(out), dim, 0), M[:, ::-1])
