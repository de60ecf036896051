"""Record JAX 0.10.2's jax.custom_batching (custom_vmap, sequential_vmap) jaxprs, eager values
and errors into tests/data/custom_batching.json (read by tests/test_custom_batching.py).

    /work/oracle/bin/python tests/oracle/record_custom_batching.py

`cases(jax, jnp, lax, np)` builds (name, fn, args, traced); the pyjax test imports it, so both
sides run the same functions (and print the same rule names).  Each case is recorded with x64
off and on: the jaxpr text (or JAX's error; not for traced=False) and the eager value.
"""
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "custom_batching.json")


def cases(jax, jnp, lax, np):
    """List of (name, fn, args, traced)."""
    cb = jax.custom_batching
    C = []

    def add(name, fn, *args, traced=True):
        C.append((name, fn, args, traced))

    @cb.custom_vmap
    def f(x, y):
        return jnp.sin(x) * y

    @f.def_vmap
    def f_rule(axis_size, in_batched, xs, ys):
        return jnp.cos(xs) * ys, True

    x = np.float32(0.5)
    y = np.float32(2.0)
    xs = np.linspace(-1, 1, 3).astype(np.float32)
    ys = np.arange(1, 4).astype(np.float32)
    add("call", f, x, y)
    add("vmap", jax.vmap(f), xs, ys)
    add("vmap_in_axes_none", jax.vmap(f, (0, None)), xs, y)
    add("vmap_in_axes_1", jax.vmap(f, (1, None)), np.stack([xs, ys]), y)
    add("vmap_out_axes_1", jax.vmap(jax.vmap(f), out_axes=1), np.stack([xs, ys]),
        np.stack([ys, xs]))
    add("jit_vmap", jax.jit(jax.vmap(f)), xs, ys)
    add("vmap_jit", jax.vmap(jax.jit(f)), xs, ys)
    add("jvp", lambda a, b: jax.jvp(f, (a, b), (a, b)), x, y)
    add("vmap_jvp", jax.vmap(lambda a, b: jax.jvp(f, (a, b), (a, b))), xs, ys)
    add("vmap_jvp_primal_only", jax.vmap(lambda a: jax.jvp(f, (a, y), (x, y)), in_axes=0),
        xs)
    add("vmap_jvp_tangent_only", jax.vmap(lambda t: jax.jvp(f, (x, y), (t, y))), xs)
    add("jvp_vmap", lambda a, b: jax.jvp(jax.vmap(f), (a, b), (b, a)), xs, ys)
    add("grad_error", jax.grad(f), x, y)
    add("vjp_error", lambda a, b: jax.vjp(f, a, b)[0], x, y)
    add("int_args", jax.vmap(f), np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int32))

    # closed-over constants: an array, and a tracer of an enclosing jit
    c = np.arange(3, dtype=np.float32)

    @cb.custom_vmap
    def g(x):
        return x + c

    @g.def_vmap
    def g_rule(axis_size, in_batched, xs):
        return xs - c, in_batched[0]

    add("closure_const", g, c)
    add("closure_const_vmap", jax.vmap(g), np.ones((2, 3), np.float32))

    def closes_over_tracer(a, b):
        @cb.custom_vmap
        def h(x):
            return x * a

        @h.def_vmap
        def h_rule(axis_size, in_batched, xs):
            return xs * 2.0, True
        return jax.vmap(h)(b)
    add("closure_tracer", jax.jit(closes_over_tracer), x, xs)

    # pytrees and keyword arguments, partially batched outputs
    @cb.custom_vmap
    def tree_fn(d, scale=1.0):
        return {"sum": d["a"] + d["b"], "scaled": d["a"] * scale}

    @tree_fn.def_vmap
    def tree_rule(axis_size, in_batched, d, scale):
        batched_d, batched_scale = in_batched
        out = {"sum": d["a"] + d["b"], "scaled": d["a"] * scale * 10}
        spec = {"sum": batched_d["a"] or batched_d["b"],
                "scaled": batched_d["a"] or batched_scale}
        return out, spec

    add("tree", lambda a, b: tree_fn({"a": a, "b": b}, scale=3.0), x, y)
    add("tree_vmap", jax.vmap(lambda a, b: tree_fn({"a": a, "b": b}, scale=3.0)), xs, ys)
    add("tree_vmap_partial", jax.vmap(lambda a: tree_fn({"a": x, "b": a}, 2.0)), xs)

    @cb.custom_vmap
    def unbatched_out(x):
        return x.sum()

    @unbatched_out.def_vmap
    def unbatched_rule(axis_size, in_batched, xs):
        return xs.sum(), False

    add("rule_unbatched_output", jax.vmap(unbatched_out), np.ones((4, 2), np.float32))

    @cb.custom_vmap
    def no_rule(x):
        return x

    add("no_rule_error", no_rule, x)

    @cb.custom_vmap
    def bad(x):
        return x

    @bad.def_vmap
    def bad_spec(axis_size, in_batched, xs):
        return (xs, xs), True

    add("spec_mismatch_error", jax.vmap(bad), xs)

    @cb.custom_vmap
    def bad2(x):
        return x

    @bad2.def_vmap
    def bad_out(axis_size, in_batched, xs):
        return [xs], [True]

    add("output_mismatch_error", jax.vmap(bad2), xs)

    @cb.custom_vmap
    def kw_only(x, *, k):
        return x * k

    kw_only.def_vmap(lambda n, b, x: (x, True))
    add("kwonly_error", lambda a: kw_only(a, k=2.0), x)

    # sequential_vmap
    @cb.sequential_vmap
    def seq(x, y):
        return x.sum() + y

    add("seq_call", seq, xs, y)
    add("seq_vmap", jax.vmap(seq, (0, None)), np.ones((3, 2), np.float32), y)
    add("seq_vmap_both", jax.vmap(seq), np.arange(6, dtype=np.float32).reshape(3, 2), ys)
    add("seq_vmap_vmap", jax.vmap(jax.vmap(seq, (0, None)), (0, None)),
        np.ones((2, 3, 4), np.float32), y)
    add("seq_jvp_vmap", jax.vmap(lambda a: jax.jvp(seq, (a, y), (a, y))),
        np.ones((3, 2), np.float32))

    # custom_vjp outside custom_vmap: vmap and grad both customised (JAX's documented pattern)
    @jax.custom_vjp
    @cb.custom_vmap
    def both(x, y):
        return jnp.sin(x) * y

    @both.def_vmap
    def both_rule(axis_size, in_batched, xs, ys):
        return jnp.cos(xs) * ys, True

    def both_fwd(x, y):
        return both(x, y), (jnp.cos(x), jnp.sin(x), y)

    def both_bwd(res, g):
        cos_x, sin_x, y = res
        return (cos_x * g * y, sin_x * g)

    both.defvjp(both_fwd, both_bwd)
    add("vjp_outer_vmap", jax.vmap(both), xs, ys)
    add("vjp_outer_grad", jax.grad(both), x, y)
    add("vjp_outer_vmap_grad", jax.vmap(jax.grad(both)), xs, ys)
    return C


def value_of(out, np, jax=None):
    """An eager result as JSON: nested (dtype, shape, weak type, values) records."""
    if isinstance(out, dict):
        return {k: value_of(v, np) for k, v in sorted(out.items())}
    if isinstance(out, (tuple, list)):
        return [value_of(o, np) for o in out]
    arr = np.asarray(out)
    values = arr.astype(np.float64).tolist() if arr.dtype.kind == "f" else arr.tolist()
    return {"dtype": str(arr.dtype), "shape": list(arr.shape), "values": values,
            "weak_type": bool(getattr(out, "weak_type", False))}


def main():
    sys.path.insert(0, HERE)
    from jaxpr_recording import record_jaxprs_and_values
    warnings.simplefilter("ignore")
    record_jaxprs_and_values(cases, OUT, value_of, value_error="eager_error")


if __name__ == "__main__":
    main()
