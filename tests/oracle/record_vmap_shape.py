"""Record JAX 0.10.2's jaxprs of vmapped shape, indexing, cumulative and sort operations and of
vmapped calls (jit, custom_jvp, custom_vjp) into tests/data/vmap_shape_jaxprs.json (read by
tests/test_batching_shape_rules.py).

    /work/oracle/bin/python tests/oracle/record_vmap_shape.py

Cases are built by `vmap_shape_cases(jax, jnp, lax, np)`, which the pyjax test imports too, so
both sides trace the same functions.  Each case is recorded with x64 off and on (the cases are
rebuilt after switching, so that their constants get that mode's dtypes).  Output: one JSON
object {"jax_version", "records"}; a record has name, x64 and either "jaxpr"
(str(make_jaxpr(fn)(*args))) or "error" ({"type", "message"}).
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "vmap_shape_jaxprs.json")


def vmap_shape_cases(jax, jnp, lax, np):
    """(name, fn, args): fn is what make_jaxpr traces (a vmap, or a jit of one)."""
    f32 = np.float32
    vmap = jax.vmap
    m = np.arange(12, dtype=f32).reshape(3, 4) / 4     # 3 examples of 4
    t = np.arange(24, dtype=f32).reshape(2, 3, 4) / 8
    v4 = np.arange(4, dtype=f32) + f32(0.5)
    idx = jnp.array([2, 0, 3])                          # one index per example
    idx2 = jnp.array([[0, 3], [1, 1], [2, 0]])          # two per example
    pads = np.array([-1.0, 0.5, 2.0], f32)
    C = []

    def add(name, fn, *args):
        assert name not in {c[0] for c in C}, name
        C.append((name, fn, args))

    # the cases named in the brief
    add("getitem_slice", vmap(lambda x: x[1:3]), m)
    add("getitem_int_batched_index", vmap(lambda x, i: x[i]), m, idx)
    add("getitem_array_index", vmap(lambda x: x[jnp.array([0, 2])]), m)
    add("getitem_batched_array_index", vmap(lambda x, i: x[i]), m, idx2)
    add("at_set_static_index", vmap(lambda x: x.at[1].set(2.0)), m)
    add("at_set_batched_index", vmap(lambda x, i: x.at[i].set(0.0)), m, idx)
    add("concatenate", vmap(lambda x, y: jnp.concatenate([x, y]), in_axes=(0, None)), m, v4)
    add("reshape", vmap(lambda x: x.reshape(2, 2), in_axes=1), m.T.copy())
    add("transpose", vmap(lambda x: x.T, in_axes=2), t)
    add("jnp_cumsum", vmap(jnp.cumsum), m)
    add("jnp_sort", vmap(jnp.sort), m)
    add("jnp_where", vmap(lambda x: jnp.where(x > 1, x, 0.0)), m)
    add("jit_inside_vmap", vmap(lambda x: jax.jit(lambda y: lax.rev(y, (0,)) * 2)(x) + 1), m)
    add("jit_of_vmap", jax.jit(vmap(lambda x: x[::2])), m)
    add("vmap_of_vmap", vmap(vmap(lambda x: lax.slice(x, (1,), (4,), (2,)))), t)
    # more shape primitives, batch axes elsewhere, unbatched operands
    add("lax_concatenate_mixed_axes", vmap(lambda x, y: lax.concatenate([x, y], 0),
                                           in_axes=(1, 0)), m.T.copy(), m)
    add("lax_cumsum_axis1", vmap(lambda x: lax.cumsum(x, reverse=True), in_axes=1), m)
    add("lax_cummax_vmap_of_vmap", vmap(vmap(lambda x: lax.cummax(x)), in_axes=1), t)
    add("lax_sort_key_val_unbatched_values",
        vmap(lambda k, v: lax.sort_key_val(k, v), in_axes=(0, None)), m, v4)
    add("lax_sort_axis0", vmap(lambda x: lax.sort(x, dimension=0), in_axes=2), t)
    add("stack_unbatched", vmap(lambda x, y: jnp.stack([x, y], axis=1), in_axes=(0, None)),
        m, v4)
    add("stack_same_axis", vmap(lambda x, y: jnp.stack([x, y]), in_axes=1), m, m)
    add("split", vmap(lambda x: jnp.split(x, 2), in_axes=1), m.T.copy())
    add("broadcast_to", vmap(lambda x: jnp.broadcast_to(x, (2, 4))), m)
    add("expand_dims_squeeze", vmap(lambda x: lax.squeeze(x[None, :, None], (0,)), in_axes=1),
        m)
    add("tile", vmap(lambda x: jnp.tile(x, 2)), m)
    add("rev_axis1", vmap(lambda x: x[::-1], in_axes=1), m)
    add("pad_batched_value", vmap(lambda x, v: lax.pad(x, v, [(1, 1, 1)])), m, pads)
    add("pad_unbatched_operand", vmap(lambda v: lax.pad(v4, v, [(2, -1, 0)])), pads)
    add("dynamic_slice_operand_only", vmap(lambda x: lax.dynamic_slice(x, (1,), (2,))), m)
    add("dynamic_slice_index_only", vmap(lambda i: lax.dynamic_slice(v4, (i,), (2,))), idx)
    add("dynamic_update_slice", vmap(lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)),
                                     in_axes=(0, None, 0)), m, v4[:2].copy(), idx)
    add("dynamic_update_slice_update_only", vmap(
        lambda u: lax.dynamic_update_slice(v4, u, (1,))), m[:, :2].copy())
    add("gather_2d_point", vmap(lambda i, j: jnp.asarray(t[0])[i, j]), idx, idx)
    add("take_along_axis", vmap(lambda x, i: jnp.take_along_axis(x, i, axis=0)), m, idx2)
    add("at_add_unbatched_operand", vmap(lambda u: jnp.zeros(4).at[jnp.array([0, 0, 2])].add(u)),
        m[:, :3].copy())
    add("at_max_batched_all", vmap(lambda x, i, u: x.at[i].max(u)), m, idx2, m[:, :2].copy())
    add("at_mul_operand_only", vmap(lambda x: x.at[jnp.array([1, 3])].multiply(3.0)), m)

    @jax.custom_jvp
    def softplus(x):
        return jnp.log1p(jnp.exp(x))

    @softplus.defjvp
    def softplus_jvp(primals, tangents):
        x, = primals
        return softplus(x), tangents[0] * jax.nn.sigmoid(x)

    @jax.custom_vjp
    def clip_grad(x):
        return x[::-1]

    def clip_fwd(x):
        return clip_grad(x), None

    def clip_bwd(_, g):
        return (jnp.clip(g, -1.0, 1.0)[::-1],)

    clip_grad.defvjp(clip_fwd, clip_bwd)
    add("custom_jvp", vmap(softplus, in_axes=1), m)
    add("custom_vjp", vmap(clip_grad), m)
    add("jit_twice_in_vmap", vmap(lambda x: jnp.cumsum(x) + jnp.cumsum(x[::-1])), m)
    return C


def main():
    from jaxpr_recording import record_jaxprs
    record_jaxprs(vmap_shape_cases, OUT)


if __name__ == "__main__":
    main()
