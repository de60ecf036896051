"""Record what JAX 0.10.2 does under `jax.remove_size_one_mesh_axis_from_type` (mesh axes of
size 1 left out of types, of with_sharding_constraint's check and of psum's axes) on 8 forced
CPU devices, a (4, 1, 2) mesh named x, y, z, into tests/data/size_one_axes.json:

    /work/oracle/bin/python tests/oracle/record_size_one_axes.py

`run_all(jax, jnp, lax, np)` is shared with tests/test_size_one_axes.py, which runs the same
cases under pyjax with 8 devices.  Each record is repr() of the result (jaxprs as text, arrays
as nested lists) or the error's class name and message.
"""
import functools
import os

from jaxpr_recording import (in_mesh as _in_mesh, jaxpr_thunk, record_in_children,
                             repr_or_error, thunk_case_list)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "size_one_axes.json")


def cases(jax, jnp, lax, np):
    """[(name, thunk)]; each thunk runs with the option off and on (`name/off`, `name/on`)."""
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    explicit = jax.make_mesh((4, 1, 2), ("x", "y", "z"), axis_types=(AxisType.Explicit,) * 3)
    auto = jax.make_mesh((4, 1, 2), ("x", "y", "z"), axis_types=(AxisType.Auto,) * 3)
    data = jnp.arange(32.0).reshape(8, 4)
    xy = jax.device_put(data, NamedSharding(explicit, P(("x", "y"), "z")))
    y_only = jax.device_put(data, NamedSharding(explicit, P("y", "z")))
    out, add = thunk_case_list()
    jaxpr, in_mesh = functools.partial(jaxpr_thunk, jax), functools.partial(_in_mesh, jax)

    # types of placed arrays and of what is computed from them
    add("typeof", lambda: (str(jax.typeof(xy)), str(jax.typeof(y_only))))
    add("typeof_product", lambda: str(jax.typeof(xy * 2)))
    add("product_sharding", lambda: (xy * 2).sharding.spec)
    add("jaxpr_mul", jaxpr(lambda a: a * 2, xy))
    add("jaxpr_mul_y", jaxpr(lambda a: a * 2, y_only))
    add("jaxpr_sum", jaxpr(lambda a: (a.sum(0), a.sum(1)), xy))
    add("jit_typeof", in_mesh(explicit, lambda: str(jax.typeof(jax.jit(lambda a: a + 1)(y_only)))))
    add("jit_sharding", in_mesh(explicit, lambda: jax.jit(lambda a: a + 1)(xy).sharding.spec))
    add("zeros_out_sharding", in_mesh(explicit, lambda: str(jax.typeof(
        jnp.zeros((8, 4), out_sharding=P("y", "z"))))))
    add("jaxpr_reshard", in_mesh(explicit, jaxpr(lambda a: jax.reshard(a, P("y", "z")), xy)))
    add("constraint_y", in_mesh(explicit, jaxpr(
        lambda a: lax.with_sharding_constraint(a, P("y", "z")), y_only)))
    add("constraint_xy", in_mesh(explicit, jaxpr(
        lambda a: lax.with_sharding_constraint(a, P("y", "z")), xy)))
    add("constraint_xy_match", in_mesh(explicit, jaxpr(
        lambda a: lax.with_sharding_constraint(a, P(("x", "y"), "z")), xy)))

    # shard_map over the Auto mesh with check_vma: the body's types and collectives
    def body(fn, in_spec=P(("x", "y"), "z"), out_spec=P(("x", "y"), "z")):
        return jax.shard_map(fn, mesh=auto, in_specs=in_spec, out_specs=out_spec)

    ops = {
        "psum": lambda a: lax.psum(a, "y"),
        "psum_xy": lambda a: lax.psum(a, ("x", "y")),
        "pmean": lambda a: lax.pmean(a, "y"),
        "psum_scatter": lambda a: lax.psum_scatter(a, "y", tiled=True),
        "pmin_xy": lambda a: lax.pmin(a, ("x", "y")),
        "pmax": lambda a: lax.pmax(a, "y"),
        "pcast": lambda a: lax.pcast(a, "y", to="varying"),
        "axis_size": lambda a: a * lax.axis_size("y"),
        "axis_index": lambda a: a + lax.axis_index("y"),
    }
    for name, op in ops.items():
        add(f"shard_map_{name}", jaxpr(body(op), data))
        add(f"shard_map_{name}_value", lambda op=op: np.asarray(body(op)(data)).tolist())
    add("shard_map_in_y", jaxpr(body(lambda a: a + lax.axis_index("z"), P("y", "z"),
                                     P("y", "z")), data))
    add("shard_map_psum_invariant", jaxpr(body(lambda a: lax.psum(a, "y"), P(None, "z"),
                                               P(None, "z")), data))
    add("shard_map_out_unnamed_value",
        lambda: np.asarray(body(lambda a: a, P("y", "z"), P(None, "z"))(data)).tolist())
    # shard_map over the Explicit mesh: in_specs checked against the arguments' types
    add("shard_map_explicit", in_mesh(explicit, jaxpr(jax.shard_map(
        lambda a: a * 2, in_specs=P("y", "z"), out_specs=P("y", "z")), y_only)))
    add("shard_map_explicit_xy", in_mesh(explicit, jaxpr(jax.shard_map(
        lambda a: a * 2, in_specs=P(("x", "y"), "z"), out_specs=P(("x", "y"), "z")), xy)))
    return out


def run_all(jax, jnp, lax, np):
    """Every case with the option off, then on; and how the option itself reads."""
    option = jax.remove_size_one_mesh_axis_from_type
    results = {"option_default": repr(
        (option.value, jax.config.jax_remove_size_one_mesh_axis_from_type))}
    for flag in (False, True):
        with option(flag):
            results[f"option_value/{flag}"] = repr(option.value)
            for name, thunk in cases(jax, jnp, lax, np):
                results[f"{name}/{'on' if flag else 'off'}"] = repr_or_error(thunk)
    # one jitted function traced under both settings (the option keys its cache)
    mesh = jax.make_mesh((4, 1, 2), ("x", "y", "z"))
    f = jax.jit(lambda a: a * 2)
    a = jax.device_put(jnp.ones((8, 4)), jax.NamedSharding(mesh, jax.P("y", "z")))
    seen = []
    for flag in (False, True, False):
        with option(flag):
            seen.append(str(jax.typeof(f(a))))
    results["jit_cache"] = repr(seen)
    jax.config.update("jax_remove_size_one_mesh_axis_from_type", True)
    try:
        results["config_update"] = repr((option.value, jax.typeof(jax.device_put(
            jnp.zeros(8), jax.NamedSharding(jax.make_mesh((1, 8), ("a", "b")),
                                            jax.P(("a", "b"))))).__str__()))
    finally:
        jax.config.update("jax_remove_size_one_mesh_axis_from_type", False)

    def default_context_value():
        with option():
            return option.value
    results["context_without_value"] = repr_or_error(default_context_value)
    return results


def main() -> None:
    record_in_children(__file__, run_all, OUT, [("devices_8", 8)])


if __name__ == "__main__":
    main()
