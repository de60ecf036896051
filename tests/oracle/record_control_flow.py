"""Record JAX's jaxprs (or errors) of programs using lax control flow into
tests/data/control_flow_jaxprs.json, x64 off and on.

    /work/oracle/bin/python tests/oracle/record_control_flow.py

Needs jax==0.10.2.  `control_flow_cases(jax, jnp, lax, np)` is also imported by
tests/test_control_flow.py, so this module never imports jax at top level.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "control_flow_jaxprs.json")


def control_flow_cases(jax, jnp, lax, np):
    """List of (name, fn, args)."""
    f32, i32 = np.float32, np.int32
    x3 = np.array([0.5, -1.0, 2.0], f32)
    c3 = np.arange(3, dtype=f32)
    xs53 = (np.arange(15, dtype=f32).reshape(5, 3) - 7) / 5
    xs4 = np.array([0.3, -0.2, 0.7, 1.1], f32)
    w33 = (np.arange(9, dtype=f32).reshape(3, 3) - 4) / 6
    cases = []

    def add(name, fn, *args):
        assert name not in {c[0] for c in cases}, name
        cases.append((name, fn, args))

    # ---- cond / switch ----
    add("cond_closure_const", lambda p, x: lax.cond(p, lambda v: v + c3, lambda v: v * 2., x),
        True, x3)
    add("cond_closure_tracer", lambda p, x, y: lax.cond(p, lambda v: v + y, lambda v: v * 2., x),
        True, x3, x3)
    add("cond_int_pred", lambda i, x: lax.cond(i, lambda v: v + 1, lambda v: v * 2., x), 3, x3)
    add("cond_float_pred", lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x), f32(0.5), x3)
    add("cond_pytree", lambda p, x: lax.cond(p, lambda a, b: (a + b, a), lambda a, b: (a - b, b),
                                             x, x), True, x3)
    add("cond_no_operands", lambda p: lax.cond(p, lambda: 1., lambda: 2.), True)
    add("cond_operand_kw", lambda p, x: lax.cond(p, jnp.sin, jnp.cos, operand=x), True, x3)
    add("cond_dict_out", lambda p, x: lax.cond(p, lambda v: {"a": v, "b": v * 2},
                                               lambda v: {"a": -v, "b": v}, x), False, x3)
    add("cond_weak_branch", lambda p, x: lax.cond(p, lambda v: 1., lambda v: v, x), True, f32(1))
    add("cond_type_error", lambda p, x: lax.cond(p, lambda v: v,
                                                 lambda v: v.astype(jnp.int32), x), True, x3)
    add("cond_shape_error", lambda p, x: lax.cond(p, lambda v: v, lambda v: v[:2], x), True, x3)
    add("cond_tree_error", lambda p, x: lax.cond(p, lambda v: (v, v), lambda v: v, x), True, x3)
    add("cond_pred_shape_error", lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x),
        np.array([True, False]), x3)
    add("switch_three", lambda i, x: lax.switch(i, [lambda v: v + 1, lambda v: v * 2.,
                                                    jnp.sin], x), 3, x3)
    add("switch_strong_index", lambda i, x: lax.switch(i, [jnp.sin, jnp.cos], x), i32(1), x3)
    add("nested_cond", lambda p, q, x: lax.cond(p, lambda v: lax.cond(q, jnp.sin, jnp.cos, v),
                                                lambda v: v * 3., x), True, False, x3)
    # ---- while / fori ----
    add("while_simple", lambda x: lax.while_loop(lambda v: v < 10., lambda v: v + 1., x), f32(1))
    add("while_closure", lambda x, y: lax.while_loop(lambda v: v[0] < y, lambda v: v + y, x),
        x3, f32(3))
    add("while_tuple_carry", lambda x: lax.while_loop(
        lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5), (0, x)), x3)
    add("while_forwarded_carry", lambda x, y: lax.while_loop(
        lambda c: c[0] < 5., lambda c: (c[0] + c[1], c[1]), (x, y)), f32(0), f32(0.5))
    add("while_weak_promotion", lambda: lax.while_loop(lambda c: c < 3,
                                                       lambda c: c + np.float32(1), 1.0))
    add("while_cond_error", lambda x: lax.while_loop(lambda v: v, lambda v: v + 1., x), x3)
    add("while_carry_error", lambda x: lax.while_loop(lambda v: v < 3., lambda v: v.astype(
        jnp.int32), x), f32(0))
    add("fori_static", lambda x: lax.fori_loop(0, 3, lambda i, v: v * 2, x), x3)
    add("fori_static_closure", lambda x, y: lax.fori_loop(0, 4, lambda i, v: v * y + c3, x),
        x3, x3)
    add("fori_uses_index", lambda x: lax.fori_loop(1, 4, lambda i, v: v + i, x), x3)
    add("fori_traced_bounds", lambda n, x: lax.fori_loop(0, n, lambda i, v: v + i, x), 3, x3)
    # ---- scan / map / associative_scan ----
    add("scan_basic", lambda c, xs: lax.scan(lambda c, x: (c + x, c * x), c, xs), f32(0), xs4)
    add("scan_no_xs", lambda x: lax.scan(lambda c, _: (c * 2, c), x, None, length=4), x3)
    add("scan_reverse_unroll", lambda x, xs: lax.scan(lambda c, a: (c + a, c), x, xs,
                                                      reverse=True, unroll=2), x3, xs53)
    add("scan_pytree", lambda x, xs: lax.scan(
        lambda c, a: ((c[0] + a["u"], c[1] * 2.), {"s": c[0] * a["u"]}), (x, f32(1)),
        {"u": xs}), x3, xs53)
    add("scan_forwarded_carry", lambda x, w: lax.scan(lambda c, a: ((c[0] @ c[1], c[1]), a),
                                                      (x, w), xs53), x3, w33)
    add("scan_forwarded_xs", lambda x, xs: lax.scan(lambda c, a: (c + a, a), x, xs), x3, xs53)
    add("scan_rnn", lambda h, w, xs: lax.scan(lambda h, a: (jnp.tanh(h @ w + a),) * 2, h, xs),
        x3, w33, xs53)
    add("scan_weak_carry", lambda: lax.scan(lambda c, a: (c + np.float32(1), c), 1.0, None,
                                            length=3))
    add("scan_carry_error", lambda x: lax.scan(lambda c, a: (c.astype(jnp.int32), c), x, None,
                                               length=3), f32(1))
    add("scan_length_error", lambda xs: lax.scan(lambda c, a: (c, a), 0., xs, length=7), xs4)
    add("scan_cond_inside", lambda x, xs: lax.scan(
        lambda c, a: (lax.cond(a > 0, lambda v: v + a, lambda v: v - a, c), c), x, xs), x3, xs4)
    add("map_simple", lambda xs: lax.map(jnp.sin, xs), xs53)
    add("map_batch_size", lambda xs: lax.map(jnp.sin, xs, batch_size=2), np.ones((6, 3), f32))
    add("map_batch_remainder", lambda xs: lax.map(jnp.cos, xs, batch_size=2), xs53)
    add("associative_scan_add", lambda x: lax.associative_scan(jnp.add, x),
        np.arange(8, dtype=f32))
    add("associative_scan_reverse_axis", lambda x: lax.associative_scan(
        jnp.multiply, x, reverse=True, axis=1), xs53)
    # ---- jvp ----
    add("jvp_cond", lambda x, t: jax.jvp(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x),
                                         (x,), (t,)), f32(1), f32(1))
    add("jvp_scan", lambda x, t: jax.jvp(lambda x: lax.scan(
        lambda c, a: (jnp.sin(c) * a, c), x, xs4)[0], (x,), (t,)), f32(1), f32(1))
    add("jvp_while", lambda x, t: jax.jvp(lambda x: lax.while_loop(
        lambda v: v < 10., lambda v: v * 1.5, x), (x,), (t,)), f32(1), f32(1))
    add("jvp_fori_traced", lambda n, x, t: jax.jvp(lambda x: lax.fori_loop(
        0, n, lambda i, v: jnp.sin(v), x), (x,), (t,)), 3, f32(1), f32(1))
    # ---- reverse mode ----
    add("grad_cond", jax.grad(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x)), f32(1))
    add("grad_switch", jax.grad(lambda x, i: lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], x)),
        f32(1), 2)
    add("grad_scan", jax.grad(lambda x, xs: lax.scan(
        lambda c, a: (jnp.sin(c) * a, c), x, xs)[0]), f32(1), xs4)
    add("grad_fori", jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, v: jnp.sin(v), x)), f32(1))
    add("grad_scan_xs", jax.grad(lambda xs: jnp.sum(lax.scan(
        lambda c, a: (c * a, c + a), 1.0, xs)[1])), xs4)
    add("grad_while_error", jax.grad(lambda x: lax.while_loop(
        lambda v: v < 10., lambda v: v * 1.5, x)), f32(1))
    # ---- linearize: the linear scan keeps only the inputs its body reads (JAX's scan DCE) ----
    def linearized(f):
        return lambda *a: jax.linearize(f, *a)[1](*a)
    add("linearize_map", linearized(lambda xs: lax.map(lambda x: jnp.sin(x) * x, xs)), xs53)
    add("linearize_map_unused_input", linearized(
        lambda xs, zs: lax.map(lambda a: jnp.sin(a[0]), (xs, zs))), xs53, xs53)
    add("linearize_scan_unused_carry", linearized(lambda c, xs: lax.scan(
        lambda c, a: ((c[0] * jnp.sin(a), c[1] * a), jnp.cos(c[0]) * a), c, xs)[1]),
        (f32(0.5), f32(2.0)), xs4)
    add("linearize_map_int_tangent", linearized(
        lambda xs, ns: lax.map(lambda a: jnp.sin(a[0]) * a[1], (xs, ns))), xs4,
        np.arange(4, dtype=i32))
    # a loop-invariant carry (moved to the scan's constants) that the known loop never reads
    add("linearize_fori_invariant_carry", linearized(lambda x, y: lax.fori_loop(
        0, 3, lambda i, c: (jnp.sin(c[0]), c[1]), (x, y))[0]), f32(1.5), f32(0.5))
    add("linearize_scan_invariant_carry_out", linearized(lambda x, y: lax.scan(
        lambda c, a: ((jnp.sin(c[0]) * a, c[1]), c[0]), (x, y), xs4)), f32(1.5), f32(0.5))
    # ---- vmap ----
    add("vmap_cond_batched_pred", jax.vmap(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x)),
        np.array([True, False]), np.ones(2, f32))
    add("vmap_cond_unbatched_pred", jax.vmap(lambda x: lax.cond(True, jnp.sin, jnp.cos, x)),
        np.ones(2, f32))
    add("vmap_switch_batched_index", jax.vmap(lambda i, x: lax.switch(
        i, [jnp.sin, jnp.cos, lambda v: v * 2.], x)), np.array([0, 2, 1], i32), x3)
    add("vmap_scan", jax.vmap(lambda x: lax.scan(lambda c, a: (c * a, c), x, xs4)), x3)
    add("vmap_scan_xs_axis1", jax.vmap(lambda xs: lax.scan(lambda c, a: (c + a, c), 0., xs),
                                       in_axes=1), xs53)
    add("vmap_while_batched_pred", jax.vmap(lambda x: lax.while_loop(
        lambda v: v < 10., lambda v: v + 1., x)), x3)
    add("vmap_while_unbatched_pred", jax.vmap(lambda x: lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.), (0, x))[1]), x3)
    add("vmap_fori_traced", jax.vmap(lambda n, x: lax.fori_loop(0, n, lambda i, v: v * 2., x)),
        np.array([1, 2, 3], i32), x3)
    add("jit_of_scan", jax.jit(lambda x: lax.scan(lambda c, a: (c + a, c), x, xs53)), x3)
    return cases


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    from jaxpr_recording import record_jaxprs
    record_jaxprs(control_flow_cases, OUT)
