"""Record JAX 0.10.2's jaxprs, values and errors for `jax.ds` (its `Slice`): jnp indexing
(dynamic_slice, gather for strides and mixed indices, scatter for `.at[]`), references indexed
by it, its transformations (vmap, grad) and its pytree and constructor behaviour, into
tests/data/ds.json.

    /work/oracle/bin/python tests/oracle/record_ds.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "ds.json")


def cases(jax, jnp, lax, np):
    out = []

    def add(name, fn, *args, traced=True):
        out.append((name, fn, args, traced))

    x = jnp.arange(10.0, dtype=jnp.float32)
    y = jnp.arange(12.0, dtype=jnp.float32).reshape(3, 4)
    i3 = jnp.int32(3)
    # jnp indexing
    add("get_static", lambda x: x[jax.ds(4, 2)], x)
    add("get_one_arg", lambda x: x[jax.ds(3)], x)
    add("get_none", lambda x: x[jax.ds(None)], x)
    add("get_strided_static", lambda x: x[jax.ds(1, 3, 2)], x)
    add("get_dynamic", lambda x, i: x[jax.ds(i, 2)], x, 3)
    add("get_dynamic_array_start", lambda x, i: x[jax.ds(i, 2)], x, i3)
    add("get_dynamic_strided", lambda x, i: x[jax.ds(i, 3, 2)], x, 1)
    add("get_concrete_start", lambda x: x[jax.ds(jnp.int32(2), 3)], x)
    add("get_negative_static", lambda x: x[jax.ds(-2, 2)], x)
    add("get_clamped", lambda x: x[jax.ds(8, 3)], x)
    add("jit_get_clamped", jax.jit(lambda x, i: x[jax.ds(i, 2)]), x, 9, traced=False)
    add("jit_get_negative", jax.jit(lambda x, i: x[jax.ds(i, 2)]), x, -3, traced=False)
    add("get_2d_int_and_ds", lambda y, i: y[1, jax.ds(i, 2)], y, 1)
    add("get_2d_ds_and_strided", lambda y, i: y[jax.ds(i, 2), ::2], y, 1)
    add("get_2d_ds_and_array", lambda y, i: y[jax.ds(i, 2), jnp.array([0, 3])], y, 1)
    add("get_2d_ellipsis_none", lambda y, i: y[..., None, jax.ds(i, 3)], y, 1)
    add("at_set", lambda y, i: y.at[jax.ds(i, 2)].set(0.0), y, 1)
    add("at_add_static", lambda x: x.at[jax.ds(2, 3)].add(1.0), x)
    add("at_set_dropped", lambda x: x.at[jax.ds(8, 3)].set(0.0), x)
    add("at_set_negative", lambda x: x.at[jax.ds(-1, 2)].set(0.0), x)
    add("at_get_strided", lambda x, i: x.at[jax.ds(i, 2, 3)].get(), x, 2)
    add("vmap_start", lambda x, i: jax.vmap(lambda i: x[jax.ds(i, 3)])(i), x,
        jnp.arange(3, dtype=jnp.int32))
    add("grad", lambda x: jax.grad(lambda x: x[jax.ds(2, 3)].sum())(x), x)
    add("grad_dynamic", lambda x, i: jax.grad(lambda x: (x[jax.ds(i, 3)] ** 2).sum())(x), x, 4)
    # references
    def ref_ops(x, i):
        r = jax.new_ref(x)
        a = r[jax.ds(i, 3)]
        b = r[jax.ds(i, 3, 2)]
        r[jax.ds(i, 2)] = jnp.zeros(2, jnp.float32)
        r[jax.ds(1, 2, 3)] = jnp.ones(2, jnp.float32)
        return a, b, r[...]
    add("ref_ops", ref_ops, x, 2)
    add("ref_ops_jit", jax.jit(ref_ops), x, 2, traced=False)
    add("ref_2d", lambda y, i: jax.new_ref(y)[1, jax.ds(i, 2)], y, 1)
    add("ref_addupdate", lambda x, i: _addupdate(jax, x, i), x, 5)
    add("ref_jit_clamped", jax.jit(lambda x, i: jax.new_ref(x)[jax.ds(i, 3)]), x, 8, traced=False)
    add("ref_jit_negative", jax.jit(lambda x, i: jax.new_ref(x)[jax.ds(i, 3)]), x, -1,
        traced=False)
    add("ref_out_of_bounds", lambda x: jax.new_ref(x)[jax.ds(8, 3)], x)
    add("ref_start_out_of_bounds", lambda x: jax.new_ref(x)[jax.ds(10, 1)], x)
    # errors
    add("negative_stride", lambda: jax.ds(1, 2, -1), traced=False)
    add("float_stride", lambda: jax.ds(1, 2, 2.0), traced=False)
    add("from_slice", lambda: _slice_fields(jax.ds(0, 1).from_slice(slice(2, 9, 3), 10)),
        traced=False)
    add("from_slice_negative", lambda: jax.ds(0, 1).from_slice(slice(None, None, -1), 10),
        traced=False)
    add("pytree_static", lambda: _pytree(jax, jax.ds(3, 2)), traced=False)
    add("pytree_concrete", lambda: _pytree(jax, jax.ds(jnp.int32(3), 2)), traced=False)
    add("pytree_traced", lambda i: jax.tree_util.tree_map(lambda v: v + 1, jax.ds(i, 2)).start,
        jnp.int32(4))
    return out


def _addupdate(jax, x, i):
    r = jax.new_ref(x)
    r.addupdate(jax.numpy.ones(2, jax.numpy.float32), jax.ds(i, 2))
    return r[...]


def _slice_fields(s):
    return [s.start, s.size, s.stride]


def _pytree(jax, s):
    leaves, tree = jax.tree_util.tree_flatten(s)
    back = jax.tree_util.tree_unflatten(tree, leaves)
    return [len(leaves), int(back.start), int(back.size), back.stride,
            s.is_dynamic_start, s.is_dynamic_size]


if __name__ == "__main__":
    from jaxpr_recording import _record, write_records
    from record_numpy_manipulation import value_of
    encode = lambda out, np, jax: value_of(np, out)
    write_records(_record(cases, False, encode), OUT)
