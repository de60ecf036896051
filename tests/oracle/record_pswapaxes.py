"""Record lax.pswapaxes under JAX 0.10.2 (4 forced CPU devices) into tests/data/pswapaxes.json:
values under pmap and vmap (every axis, batched dimension not in front, nested maps, pytrees,
jit inside, grad), errors, and jaxpr texts with x64 off and on.

    XLA_FLAGS=--xla_force_host_platform_device_count=4 /work/oracle/bin/python \
        tests/oracle/record_pswapaxes.py

`cases(jax, jnp, lax, np)` and `run(...)` are shared with tests/test_pswapaxes.py, which runs
them under pyjax with PYJAX_NUM_CPU_DEVICES=4.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "pswapaxes.json")


def cases(jax, jnp, lax, np):
    """[(name, thunk, is_jaxpr)]."""
    pmap, vmap = jax.pmap, jax.vmap
    x3 = np.arange(4 * 4 * 3 * 2, dtype=np.float32).reshape(4, 4, 3, 2)
    x3b = np.arange(4 * 3 * 4 * 2, dtype=np.float32).reshape(4, 3, 4, 2)
    x3c = np.arange(4 * 3 * 2 * 4, dtype=np.float32).reshape(4, 3, 2, 4)
    ints = np.arange(4 * 4 * 2, dtype=np.int32).reshape(4, 4, 2)
    out = []

    def add(name, thunk, is_jaxpr=False):
        out.append((name, thunk, is_jaxpr))

    for axis, x in ((0, x3), (1, x3b), (2, x3c), (-1, x3c)):
        f = lambda v, axis=axis: lax.pswapaxes(v, "i", axis)  # noqa: E731
        add(f"pmap_axis{axis}", lambda f=f, x=x: pmap(f, axis_name="i")(x))
        add(f"vmap_axis{axis}", lambda f=f, x=x: vmap(f, axis_name="i")(x))
        add(f"jaxpr_vmap_axis{axis}", lambda f=f, x=x: jax.make_jaxpr(
            vmap(f, axis_name="i"))(x), True)
    add("pmap_int", lambda: pmap(lambda v: lax.pswapaxes(v, "i", 0), axis_name="i")(ints))
    add("vmap_in_axes1", lambda: vmap(lambda v: lax.pswapaxes(v, "i", 0), in_axes=1,
                                      axis_name="i")(np.swapaxes(x3, 0, 1)))
    add("vmap_out_axes1", lambda: vmap(lambda v: lax.pswapaxes(v, "i", 1), out_axes=1,
                                       axis_name="i")(x3b))
    add("nested_vmap_inner_name", lambda: vmap(vmap(lambda v: lax.pswapaxes(v, "j", 0),
                                                    axis_name="j"), axis_name="i")(
        np.arange(2 * 3 * 3, dtype=np.float32).reshape(2, 3, 3)))
    add("nested_vmap_outer_name", lambda: vmap(vmap(lambda v: lax.pswapaxes(v, "i", 0),
                                                    axis_name="j"), axis_name="i")(
        np.arange(3 * 2 * 3, dtype=np.float32).reshape(3, 2, 3)))
    add("pmap_vmap", lambda: pmap(vmap(lambda v: lax.pswapaxes(v, "i", 0), axis_name="j"),
                                  axis_name="i")(np.arange(4 * 2 * 4, dtype=np.float32)
                                                 .reshape(4, 2, 4)))
    add("pytree", lambda: vmap(lambda t: lax.pswapaxes(t, "i", 0), axis_name="i")(
        {"a": x3[:, :, 0, 0], "b": (x3b[:, 0, :, :],)}))
    add("jit_inside_vmap", lambda: vmap(jax.jit(lambda v: lax.pswapaxes(v, "i", 1)),
                                        axis_name="i")(x3b))
    add("jit_inside_pmap", lambda: pmap(jax.jit(lambda v: lax.pswapaxes(v, "i", 1)),
                                        axis_name="i")(x3b))
    w = np.arange(4 * 4 * 3, dtype=np.float32).reshape(4, 4, 3) / 7
    add("grad_pmap", lambda: pmap(jax.grad(lambda v, k: (lax.pswapaxes(v, "i", 0) * k).sum()),
                                  axis_name="i")(x3[..., 0], w))
    add("grad_vmap", lambda: vmap(jax.grad(lambda v, k: (lax.pswapaxes(v, "i", 0) * k).sum()),
                                  axis_name="i")(x3[..., 0], w))
    add("jvp_vmap", lambda: vmap(lambda v: jax.jvp(lambda u: lax.pswapaxes(u, "i", 1), (v,),
                                                   (v * 2,))[1], axis_name="i")(x3b))
    add("wrong_size_pmap", lambda: pmap(lambda v: lax.pswapaxes(v, "i", 1),
                                        axis_name="i")(x3))
    add("wrong_size_vmap", lambda: vmap(lambda v: lax.pswapaxes(v, "i", 1),
                                        axis_name="i")(x3))
    add("unbound_name", lambda: vmap(lambda v: lax.pswapaxes(v, "j", 0), axis_name="i")(x3))
    add("eager", lambda: lax.pswapaxes(x3, "i", 0))
    add("jaxpr_jvp_vmap", lambda: jax.make_jaxpr(vmap(lambda v: jax.jvp(
        lambda u: lax.pswapaxes(u, "i", 1), (v,), (v * 2,))[1], axis_name="i"))(x3b), True)
    add("jaxpr_in_jit", lambda: jax.make_jaxpr(vmap(jax.jit(
        lambda v: lax.pswapaxes(v, "i", 0)), axis_name="i"))(x3), True)
    return out


def encode(np, jax, v):
    leaves, tree = jax.tree_util.tree_flatten(v)
    return {"tree": str(tree), "leaves": [
        {"dtype": str(np.asarray(a).dtype), "shape": list(np.shape(a)),
         "values": np.asarray(a).tolist()} for a in leaves]}


def run(jax, jnp, lax, np, only_jaxprs=False):
    records = {}
    for name, thunk, is_jaxpr in cases(jax, jnp, lax, np):
        if only_jaxprs and not is_jaxpr:
            continue
        try:
            v = thunk()
            records[name] = {"jaxpr": str(v)} if is_jaxpr else {"value": encode(np, jax, v)}
        except Exception as e:  # noqa: BLE001 - the error is the record
            records[name] = {"error": type(e).__name__, "message": str(e)}
    return records


def main():
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    assert jax.device_count() == 4, "set XLA_FLAGS=--xla_force_host_platform_device_count=4"
    data = {"jax_version": jax.__version__, "x64_off": run(jax, jnp, lax, np)}
    jax.config.update("jax_enable_x64", True)
    data["x64_on"] = run(jax, jnp, lax, np, only_jaxprs=True)
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
