"""Record JAX 0.10.2's jaxprs of gradients through the shape, indexing and cumulative
primitives into tests/data/ad_shape_jaxprs.json (read by tests/test_autodiff_shape_rules.py).

    /work/oracle/bin/python tests/oracle/record_ad_shape.py

Cases are built by `ad_shape_cases(jax, jnp, lax, np)`, which the pyjax test imports too, so
both sides trace the same functions.  Each case is recorded with x64 off and on (the flag is
switched in-process; the cases are rebuilt after each switch so that their constants get that
mode's dtypes).  Output: one JSON object {"jax_version", "records"}; a record has name, x64 and
either "jaxpr" (str(make_jaxpr(fn)(*args))) or "error" ({"type", "message"}).
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "ad_shape_jaxprs.json")


def ad_shape_cases(jax, jnp, lax, np):
    """(name, fn, args): fn is what make_jaxpr traces (mostly a jax.grad of something)."""
    x6 = np.arange(6, dtype=np.float32) * np.float32(0.5) + np.float32(0.25)
    x23 = x6.reshape(2, 3)
    s = np.float32(2.0)
    idx = jnp.array([0, 2, 2])
    uniq = jnp.array([4, 1])
    grad, grad2 = jax.grad, (lambda f: jax.grad(f, argnums=(0, 1)))
    C = []

    def add(name, fn, *args):
        C.append((name, fn, args))

    # the cases named in the brief
    add("slice_sum", grad(lambda x: x[1:3].sum()), x6)
    add("reshape_transpose_sum", grad(lambda x: x.reshape(2, 3).T.sum()), x6)
    add("concatenate_sum", grad(lambda x: jnp.concatenate([x, x]).sum()), x6)
    add("gather_int_index_sum", grad(lambda x: x[idx].sum()), x6)
    add("at_set_sum", grad(lambda x: x.at[1].set(2.0).sum()), x6)
    add("jnp_cumsum_sum", grad(lambda x: jnp.cumsum(x).sum()), x6)
    add("jnp_sort_first", grad(lambda x: jnp.sort(x)[0]), x6)
    # lax-level versions (no jit wrapper) and more primitives
    add("lax_cumsum_sum", grad(lambda x: (lax.cumsum(x, reverse=True) * x).sum()), x6)
    add("lax_sort_first", grad(lambda x: lax.sort(x)[0]), x6)
    add("lax_sort_2d_axis0", grad(lambda x: (lax.sort(x, dimension=0) * x).sum()), x23)
    add("lax_sort_key_val", grad2(lambda k, v: (lax.sort_key_val(k, v)[1] * k).sum()),
        x6, x6[::-1].copy())
    add("lax_cumprod", grad(lambda x: lax.cumprod(x).sum()), x6)
    add("stop_gradient_mul", grad(lambda x: lax.stop_gradient(x) * x), s)
    add("stack_sum", grad(lambda x: jnp.stack([x, 2 * x]).sum()), x6)
    add("pad_interior", grad(lambda x: lax.pad(x, 0.0, [(1, 2, 1)]).sum()), x6)
    add("pad_negative", grad(lambda x: (lax.pad(x, 0.0, [(-1, 2, 0)]) ** 2).sum()), x6)
    add("pad_value", grad2(lambda x, v: (lax.pad(x, v, [(1, 1, 1)]) ** 2).sum()), x6, s)
    add("slice_strided", grad(lambda x: (x[1::2] ** 2).sum()), x6)
    add("dynamic_slice_sum", grad(lambda x: lax.dynamic_slice(x, (jnp.int32(1),), (2,)).sum()),
        x6)
    add("dynamic_update_slice", grad2(
        lambda x, u: (lax.dynamic_update_slice(x, u, (jnp.int32(2),)) ** 2).sum()),
        x6, x6[:2].copy())
    add("split_sum", grad(lambda x: jnp.split(x, 2)[1].sum()), x6)
    add("tile_sum", grad(lambda x: jnp.tile(x, 2).sum()), x6)
    add("broadcast_sum", grad(lambda x: jnp.broadcast_to(x, (2, 6)).sum()), x6)
    add("broadcast_unit_dim", grad(lambda x: (x[:, None] * x23[None, :, 0]).sum()), x6)
    add("squeeze_sum", grad(lambda x: x.reshape(1, 6).squeeze().sum()), x6)
    add("rev_first", grad(lambda x: x[::-1][0]), x6)
    add("transpose_3d", grad(lambda x: (x.reshape(1, 2, 3).transpose(2, 0, 1) ** 2).sum()), x6)
    add("expand_dims_sum", grad(lambda x: (jnp.expand_dims(x, (0, 2)) ** 2).sum()), x6)
    add("scatter_add_both", grad2(lambda x, u: (x.at[idx].add(u) ** 2).sum()), x6, x6[:3].copy())
    add("scatter_mul_operand", grad(lambda x: (x.at[idx].multiply(3.0) ** 2).sum()), x6)
    add("scatter_set_unique", grad2(lambda x, u: (x.at[uniq].set(u) ** 2).sum()),
        x6, x6[:2].copy())
    add("gather_2d_rows", grad(lambda x: (x[jnp.array([1, 0, 1])] ** 2).sum()), x23)
    add("take_along_axis", grad(lambda x: (jnp.take_along_axis(
        x, jnp.array([[2, 0, 1], [1, 1, 0]]), axis=1) ** 2).sum()), x23)
    add("jvp_dynamic_slice", lambda x, t: jax.jvp(
        lambda y: lax.dynamic_slice(y, (jnp.int32(3),), (2,)), (x,), (t,)), x6, x6)
    add("vjp_concatenate_const", lambda x, ct: jax.vjp(
        lambda y: jnp.concatenate([y, jnp.ones(2, y.dtype), y]), x)[1](ct),
        x6, np.arange(14, dtype=np.float32))
    add("scatter_mul_twice", grad(
        lambda x: (x.at[1].multiply(2.0).at[2].multiply(3.0) ** 2).sum()), x6)
    add("scatter_set_nonunique", grad2(lambda x, u: (x.at[idx].set(u) ** 2).sum()),
        x6, x6[:3].copy())
    add("scatter_max_jvp", lambda x, u, t, tu: jax.jvp(
        lambda a, b: a.at[idx].max(b), (x, u), (t, tu)), x6, x6[:3].copy(), x6, x6[:3].copy())
    add("gather_fill", grad(lambda x: (x.at[jnp.array([0, 7, 5])].get(
        mode="fill", fill_value=0.0) ** 2).sum()), x6)
    add("sort_two_keys", grad(lambda x: (lax.sort((x[::-1], x, x * x), num_keys=2)[2]
                                         * x).sum()), x6)
    add("lax_cummax", grad(lambda x: (lax.cummax(x, reverse=True) * x).sum()), x6)
    add("grad_grad_slice_concat", grad(lambda x: grad(
        lambda y: (jnp.concatenate([y[:2], y[3:]]) ** 3).sum())(x)[4]), x6)
    add("grad_grad_gather_pad", grad(lambda x: grad(
        lambda y: (lax.pad(y[idx], 1.0, [(1, 0, 1)]) ** 3).sum())(x).sum()), x6)
    return C


def main():
    from jaxpr_recording import record_jaxprs
    record_jaxprs(ad_shape_cases, OUT)


if __name__ == "__main__":
    main()
