"""Record what JAX 0.10.2 computes (or raises) for the collectives added in
pyjax/_src/parallel/collectives.py (axis_size, pshuffle, pswapaxes, all_to_all, pbroadcast,
pcast, psend, precv, ragged_all_to_all, with_sharding_constraint), with 4 forced CPU devices, into
tests/data/collectives_extra.json.

    XLA_FLAGS=--xla_force_host_platform_device_count=4 /work/oracle/bin/python \
        tests/oracle/record_collectives_extra.py

`cases(jax, jnp, lax, np, sharding)` is shared with tests/test_collectives_extra.py, which runs
the same cases under pyjax.  Each case is (name, thunk); the record is the result's dtype,
shape and values, or str() of a jaxpr, or the error's class and message.  Jaxpr cases run with
x64 off and on.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "collectives_extra.json")
PERM = [(0, 1), (1, 2), (2, 3), (3, 0)]


def cases(jax, jnp, lax, np, sharding):
    """[(name, thunk)]: `sharding` is a NamedSharding over the 4 devices, mesh axis 'd',
    spec P('d'); `sharding.spec` gives the PartitionSpec class."""
    P = type(sharding.spec)
    mesh = sharding.mesh
    x = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    x3 = np.zeros((4, 8, 4), np.float32)
    pmap, vmap = jax.pmap, jax.vmap
    out = []

    def add(name, thunk):
        out.append((name, thunk))

    def jaxpr(fn, *args):
        return lambda: str(jax.make_jaxpr(fn)(*args))

    # axis_size: psum(1) of the visible axes, a Python int
    add("axis_size_pmap", lambda: pmap(lambda v: v * lax.axis_size("i"), axis_name="i")(x))
    add("axis_size_vmap", lambda: vmap(lambda v: v * lax.axis_size("i"), axis_name="i")(x))
    add("axis_size_tuple", lambda: vmap(vmap(lambda v: v * lax.axis_size(("i", "j")),
                                             axis_name="j"), axis_name="i")(x))
    add("axis_size_is_int", lambda: vmap(
        lambda v: v + float(isinstance(lax.axis_size("i"), int)), axis_name="i")(x))
    add("axis_size_eager", lambda: lax.axis_size("i"))
    add("axis_size_unbound", lambda: vmap(lambda v: lax.axis_size("j"), axis_name="i")(x))
    add("axis_size_jit_inside", lambda: vmap(jax.jit(lambda v: v * lax.axis_size("i")),
                                             axis_name="i")(x))
    add("psum_const_bool", lambda: vmap(lambda v: v + lax.psum(True, "i"), axis_name="i")(x))
    add("psum_const_array", lambda: vmap(lambda v: v + lax.psum(jnp.ones(3), "i"),
                                         axis_name="i")(x))
    add("jaxpr_axis_size", jaxpr(vmap(lambda v: v * lax.axis_size("i"), axis_name="i"), x))
    # pshuffle / ppermute / psend
    add("pshuffle_pmap", lambda: pmap(lambda v: lax.pshuffle(v, "i", [1, 2, 3, 0]),
                                      axis_name="i")(x))
    add("pshuffle_vmap", lambda: vmap(lambda v: lax.pshuffle(v, "i", [3, 2, 1, 0]),
                                      axis_name="i")(x))
    add("pshuffle_not_a_permutation", lambda: vmap(lambda v: lax.pshuffle(v, "i", [1, 1, 3, 0]),
                                                   axis_name="i")(x))
    add("pshuffle_grad", lambda: pmap(jax.grad(lambda v: (lax.pshuffle(v, "i", [1, 2, 3, 0])
                                                          * jnp.arange(3.0)).sum()),
                                      axis_name="i")(x))
    add("pshuffle_jit_inside", lambda: vmap(jax.jit(lambda v: lax.pshuffle(v, "i", [2, 3, 0, 1])),
                                            axis_name="i")(x))
    add("jaxpr_pshuffle", jaxpr(vmap(lambda v: lax.pshuffle(v, "i", [1, 2, 3, 0]),
                                     axis_name="i"), x))
    add("ppermute_vmap_partial", lambda: vmap(lambda v: lax.ppermute(v, "i", [(0, 1)]),
                                              axis_name="i")(x))
    add("ppermute_pmap_partial", lambda: pmap(lambda v: lax.ppermute(v, "i", [(0, 1)]),
                                              axis_name="i")(x))
    add("psend_vmap", lambda: vmap(lambda v: lax.psend(v, "i", PERM), axis_name="i")(x))
    add("psend_vmap_partial", lambda: vmap(lambda v: lax.psend(v, "i", [(0, 1)]),
                                           axis_name="i")(x))
    add("psend_pmap", lambda: pmap(lambda v: (lax.psend(v, "i", PERM), v)[1], axis_name="i")(x))
    add("psend_eager", lambda: lax.psend(x, "i", PERM))
    add("psend_jvp", lambda: vmap(lambda v: jax.jvp(lambda u: lax.psend(u, "i", PERM), (v,),
                                                    (v,))[1], axis_name="i")(x))
    add("jaxpr_psend", jaxpr(vmap(lambda v: lax.psend(v, "i", PERM), axis_name="i"), x))
    # precv: staged anywhere, lowered for GPUs only
    f32x3 = jax.ShapeDtypeStruct((3,), jnp.float32)

    def recv(token, shape=f32x3):
        return lax.precv(token, shape, "i", PERM)
    add("precv_eager", lambda: recv(lax.create_token()))
    add("precv_pmap", lambda: pmap(lambda v: recv(lax.create_token()), axis_name="i")(x))
    add("precv_vmap", lambda: vmap(lambda v: recv(lax.create_token()), axis_name="i")(x))
    add("precv_vmap_after_psend", lambda: vmap(lambda v: recv(lax.psend(v, "i", PERM)),
                                               axis_name="i")(x))
    add("jaxpr_precv", jaxpr(lambda: recv(lax.create_token())))
    add("jaxpr_precv_pmap", jaxpr(pmap(lambda v: recv(lax.create_token()), axis_name="i"), x))
    add("jaxpr_precv_int", jaxpr(lambda: recv(lax.create_token(),
                                              jax.ShapeDtypeStruct((2, 5), jnp.int32))))
    # all_to_all and pswapaxes
    for split in range(3):
        for concat in range(3):
            for tiled in (False, True):
                base = (np.arange(48.0, dtype=np.float32).reshape(4, 4, 3) if split != 2 or tiled
                        else np.arange(64.0, dtype=np.float32).reshape(4, 4, 4))

                def fn(v, base=base, split=split, concat=concat, tiled=tiled):
                    return lax.all_to_all(base * v[0] + v[1], "i", split, concat, tiled=tiled)
                add(f"all_to_all_{split}_{concat}_{'tiled' if tiled else 'untiled'}",
                    lambda fn=fn: pmap(fn, axis_name="i")(x))
    add("all_to_all_vmap", lambda: vmap(lambda v: lax.all_to_all(
        jnp.outer(jnp.arange(4.0), v), "i", 0, 1), axis_name="i")(x))
    add("all_to_all_jit_inside", lambda: vmap(jax.jit(lambda v: lax.all_to_all(
        jnp.outer(jnp.arange(4.0), v), "i", 0, 1)), axis_name="i")(x))
    add("all_to_all_wrong_size", lambda: pmap(lambda v: lax.all_to_all(v, "i", 0, 0),
                                              axis_name="i")(x))
    add("all_to_all_indivisible", lambda: pmap(lambda v: lax.all_to_all(v, "i", 0, 0, tiled=True),
                                               axis_name="i")(x))
    add("jaxpr_all_to_all", jaxpr(vmap(lambda v: lax.all_to_all(
        jnp.outer(jnp.arange(4.0), v), "i", 0, 1), axis_name="i"), x))
    add("pswapaxes_pmap", lambda: pmap(lambda v: lax.pswapaxes(
        v.reshape(3, 1) * jnp.ones((3, 4)), "i", 1), axis_name="i")(x))
    add("pswapaxes_vmap", lambda: vmap(lambda v: lax.pswapaxes(
        jnp.stack([v * k for k in range(4)]), "i", 0), axis_name="i")(x))
    add("jaxpr_pswapaxes", jaxpr(vmap(lambda v: lax.pswapaxes(
        jnp.outer(jnp.arange(4.0), v), "i", 0), axis_name="i"), x))
    # pbroadcast: what JAX does without a CPU lowering
    add("pbroadcast_unbatched", lambda: vmap(lambda v: lax.pbroadcast(jnp.ones(2), "i", 1),
                                             axis_name="i")(x))
    add("pbroadcast_eager", lambda: lax.pbroadcast(x, "i", 1))
    add("pbroadcast_other_axis", lambda: vmap(lambda v: lax.pbroadcast(v, "j", 1),
                                              axis_name="i")(x))
    # pcast
    add("pcast_pmap_varying", lambda: pmap(lambda v: lax.pcast(v, "i", to="varying"),
                                           axis_name="i")(x))
    add("pcast_pmap_reduced", lambda: pmap(lambda v: lax.pcast(v, ("i",), to="reduced"),
                                           axis_name="i")(x))
    add("pcast_pmap_unreduced", lambda: pmap(lambda v: lax.pcast(v, "i", to="unreduced"),
                                             axis_name="i")(x))
    add("pcast_vmap_varying", lambda: vmap(lambda v: lax.pcast(v, "i", to="varying"),
                                           axis_name="i")(x))
    add("pcast_vmap_reduced", lambda: vmap(lambda v: lax.pcast(v, "i", to="reduced"),
                                           axis_name="i")(x))
    add("pcast_eager_varying", lambda: lax.pcast(x, "i", to="varying"))
    add("pcast_eager_reduced", lambda: lax.pcast(x, "i", to="reduced"))
    add("pcast_set", lambda: lax.pcast(x, {"i"}, to="varying"))
    add("pcast_no_axes", lambda: lax.pcast(x, (), to="bogus"))
    add("pcast_unbound_jit", lambda: jax.make_jaxpr(lambda v: lax.pcast(v, "i", to="varying"))(x))
    add("pcast_unbound_jit_reduced", lambda: jax.make_jaxpr(
        lambda v: lax.pcast(v, "i", to="reduced"))(x))
    # ragged_all_to_all: vmap and eager (JAX's CPU backend has no pmap lowering)
    ragged = (np.ones((4, 4), np.float32), np.zeros((4, 6), np.float32),
              np.zeros((4, 4), np.int32), np.ones((4, 4), np.int32),
              np.tile(np.arange(4, dtype=np.int32)[:, None], (1, 4)),
              np.ones((4, 4), np.int32))

    def ragged_fn(*changes):
        def fn(a, b, c, d, e, f):
            args = [a, b, c, d, e, f]
            for i, change in changes:
                args[i] = change(args[i])
            return lax.ragged_all_to_all(*args, axis_name="i")
        return fn
    add("ragged_vmap", lambda: vmap(ragged_fn(), axis_name="i")(*ragged))
    add("ragged_eager", lambda: ragged_fn()(*[r[0] for r in ragged]))
    add("ragged_float_offsets", lambda: pmap(ragged_fn((2, lambda c: c.astype(jnp.float32))),
                                             axis_name="i")(*ragged))
    add("ragged_float_recv_sizes", lambda: vmap(ragged_fn((5, lambda c: c.astype(jnp.float32))),
                                                axis_name="i")(*ragged))
    add("ragged_rank2", lambda: pmap(ragged_fn((3, lambda c: c[None])), axis_name="i")(*ragged))
    add("ragged_empty", lambda: pmap(ragged_fn((4, lambda c: c[:0])), axis_name="i")(*ragged))
    # with_sharding_constraint
    add("wsc_none", lambda: lax.with_sharding_constraint(x, None))
    add("wsc_not_a_sharding", lambda: lax.with_sharding_constraint(x, 3))
    add("wsc_partition_spec", lambda: lax.with_sharding_constraint(x, P("d")))
    add("wsc_eager", lambda: lax.with_sharding_constraint(x, sharding))
    add("wsc_scalar", lambda: lax.with_sharding_constraint(2.0, type(sharding)(mesh, P())))
    add("wsc_rank0", lambda: lax.with_sharding_constraint(jnp.ones(()), sharding))
    add("wsc_rank1", lambda: lax.with_sharding_constraint(jnp.ones(3), type(sharding)(
        mesh, P(None, "d"))))
    add("wsc_jit_tree", lambda: jax.jit(lambda v: lax.with_sharding_constraint(
        (v, {"a": v * 2}), sharding))(x))
    add("wsc_grad", lambda: jax.grad(lambda v: (lax.with_sharding_constraint(v, sharding)
                                                ** 2).sum())(x))
    add("wsc_vmap", lambda: vmap(lambda v: lax.with_sharding_constraint(v, sharding))(x))
    add("wsc_jit_inside_vmap", lambda: vmap(jax.jit(
        lambda v: lax.with_sharding_constraint(v, sharding)))(x))
    add("jaxpr_wsc", jaxpr(lambda v: lax.with_sharding_constraint(v, sharding), x))
    add("jaxpr_wsc_unconstrained", jaxpr(lambda v: lax.with_sharding_constraint(
        v, type(sharding)(mesh, P(P.UNCONSTRAINED, "d"))), x))
    for spec in ((), ("d",), (None, "d")):
        add(f"jaxpr_wsc_vmap_{'_'.join(map(str, spec)) or 'replicated'}", jaxpr(vmap(
            lambda v, spec=spec: lax.with_sharding_constraint(v, type(sharding)(mesh, P(*spec))),
            in_axes=1), x3))
    add("jaxpr_wsc_vmap_vmap", jaxpr(vmap(vmap(lambda v: lax.with_sharding_constraint(
        v, sharding)), in_axes=1), x3))
    add("jaxpr_wsc_jvp", jaxpr(lambda v: jax.jvp(lambda u: lax.with_sharding_constraint(
        u, sharding), (v,), (v,)), x))
    return out


def record(value, np):
    """A JSON-able record of a result (str for jaxprs) or of the error raised."""
    if isinstance(value, str):
        return {"text": value}
    if isinstance(value, BaseException):
        return {"error": type(value).__name__, "message": str(value)}
    arr = np.asarray(value)
    return {"dtype": arr.dtype.name, "shape": list(arr.shape), "data": arr.ravel().tolist(),
            "weak_type": bool(getattr(value, "weak_type", False)),
            "python_type": type(value).__name__ if type(value) in (int, float) else "array"}


def run_all(jax, jnp, lax, np, sharding, only_jaxprs: bool = False) -> dict:
    out = {}
    for name, thunk in cases(jax, jnp, lax, np, sharding):
        if only_jaxprs and not name.startswith("jaxpr_"):
            continue
        try:
            value = thunk()
        except Exception as e:  # noqa: BLE001 - the error is the record
            out[name] = [record(e, np)]
            continue
        leaves = [value] if isinstance(value, (str, int, float)) else \
            jax.tree_util.tree_leaves(value)
        out[name] = [record(v, np) for v in leaves]
    return out


def main() -> None:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    assert jax.__version__ == "0.10.2" and jax.local_device_count() == 4, \
        "run with jax 0.10.2 and XLA_FLAGS=--xla_force_host_platform_device_count=4"
    sharding = NamedSharding(Mesh(np.array(jax.devices()), ("d",)), PartitionSpec("d"))
    records = run_all(jax, jnp, lax, np, sharding)
    jax.config.update("jax_enable_x64", True)
    records_x64 = run_all(jax, jnp, lax, np, sharding, only_jaxprs=True)
    with open(OUT, "w") as f:
        json.dump({"jax_version": jax.__version__, "records": records,
                   "records_x64": records_x64}, f, indent=1, sort_keys=True)
        f.write("\n")
    print(len(records), "records", file=sys.stderr)


if __name__ == "__main__":
    main()
