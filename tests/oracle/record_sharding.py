"""Record what JAX 0.10.2 gives for `jax.sharding` on local CPU devices (PartitionSpec, Mesh,
AbstractMesh, make_mesh, set_mesh, NamedSharding, SingleDeviceSharding, placed arrays and their
shards, make_array_from_*, with_sharding_constraint, reshard, jit's in/out_shardings and the
`out_sharding=` keyword) into tests/data/sharding.json, once with 4 devices and once with 1:

    /work/oracle/bin/python tests/oracle/record_sharding.py

`cases(jax, jnp, lax, np)` is shared with tests/test_sharding.py, which runs the same cases
under pyjax with the same device count.  Each record is a string: repr() of the result (sets of
devices as sorted ids), or the error's class name and message (source locations cut off).
"""
import functools
import os
import warnings

from jaxpr_recording import (in_mesh as _in_mesh, jaxpr_thunk, record_in_children,
                             repr_or_error, thunk_case_list)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "data", "sharding.json")


def cases(jax, jnp, lax, np):
    """[(name, thunk)] for the device count in effect (4 or 1)."""
    from jax.sharding import (AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec,
                              SingleDeviceSharding)
    P = PartitionSpec
    devs = jax.devices()
    n = len(devs)
    two = (2, 2) if n == 4 else (1, 1)
    mesh = Mesh(np.array(devs).reshape(two), ("x", "y"))
    mesh1 = Mesh(np.array(devs), ("x",))
    emesh = jax.make_mesh(two, ("x", "y"))
    s = NamedSharding(mesh, P("x", "y"))
    x = jnp.arange(24.0).reshape(4, 6)
    out, add = thunk_case_list()
    jaxpr, in_mesh = functools.partial(jaxpr_thunk, jax), functools.partial(_in_mesh, jax)

    def shards(a):
        return [(sh.device.id, sh.index, sh.replica_id, np.asarray(sh.data).tolist(),
                 repr(sh.data.sharding)) for sh in a.addressable_shards]

    # PartitionSpec
    add("P_empty", lambda: P())
    add("P_none_x", lambda: P(None, "x"))
    add("P_nested", lambda: P(("x", "y"), None, P.UNCONSTRAINED))
    add("P_str", lambda: str(P("x", ("y", "z"))))
    add("P_unconstrained", lambda: P.UNCONSTRAINED)
    add("P_eq_tuple", lambda: P("x") == ("x",))
    add("P_eq_padded", lambda: P("x", None) == P("x"))
    add("P_eq", lambda: (P("x", ("a", "b")) == P("x", ("a", "b")), P("x") != P("y")))
    add("P_hash", lambda: hash(P("x", None)) == hash(P("x", None)))
    add("P_is_tuple", lambda: isinstance(P("x"), tuple))
    add("P_len_getitem", lambda: (len(P("x", None)), P("x", "y")[1], P("x", "y", None)[1:]))
    add("P_list", lambda: list(P("x", ("a", "b"))))
    add("P_canonical", lambda: (P(("x",)), P([]), P(()), P(["x", "y"]), P((None,))))
    add("P_nested_tuple_error", lambda: P([["x"]]))
    add("P_add", lambda: (P("x") + P("y"), P("x") + ("y",), ("y",) + P("x")))
    add("P_index_count", lambda: (P("x", None).index(None), P("x", None).count(None)))
    add("P_reduced", lambda: (P("x", reduced={"y"}), P(unreduced={"y"}),
                              P("x", None, unreduced={"a"}, reduced={"b"})))
    add("P_reduced_iter", lambda: list(P("x", unreduced={"y"})))
    add("P_reduced_type", lambda: P("x", unreduced=["y"]))
    add("P_reduced_overlap", lambda: P("x", unreduced={"x"}))
    add("P_partitions", lambda: P("x", None).partitions)
    add("P_is_jax_P", lambda: jax.P is P)
    add("P_pytree_leaf", lambda: jax.tree_util.tree_leaves({"a": P("x", "y")}))
    # Mesh, AxisType, make_mesh, AbstractMesh
    add("mesh_repr", lambda: (repr(mesh), str(mesh), repr(mesh1)))
    add("mesh_str_axis", lambda: Mesh(np.array(devs), "x"))
    add("mesh_list_devices", lambda: Mesh(devs, ("x",)))
    add("mesh_attrs", lambda: (mesh.axis_names, mesh.shape, mesh.shape_tuple, mesh.size,
                               mesh.axis_sizes, mesh.axis_types, mesh.empty,
                               mesh.is_multi_process))
    add("mesh_devices", lambda: (mesh.devices, mesh.devices.dtype, mesh.device_ids,
                                 mesh.local_devices))
    add("mesh_abstract", lambda: (mesh.abstract_mesh, str(mesh.abstract_mesh)))
    add("mesh_eq", lambda: (mesh == Mesh(mesh.devices, ("x", "y")),
                            hash(mesh) == hash(Mesh(mesh.devices, ("x", "y"))),
                            mesh == Mesh(mesh.devices, ("a", "b"))))
    add("mesh_ndim_error", lambda: Mesh(np.array(devs), ("x", "y")))
    add("mesh_none_name", lambda: Mesh(np.array(devs), (None,)))
    add("mesh_axis_types", lambda: (Mesh(np.array(devs), ("x",), axis_types=AxisType.Explicit),
                                    Mesh(np.array(devs), ("x",), (AxisType.Manual,))))
    add("mesh_axis_types_error", lambda: Mesh(np.array(devs), ("x",), axis_types=("Auto",)))
    add("mesh_axis_types_count", lambda: Mesh(np.array(devs), ("x",),
                                              axis_types=(AxisType.Auto,) * 2))
    add("axis_type", lambda: (list(AxisType), repr(AxisType.Auto), str(AxisType.Explicit),
                              AxisType.Manual.value))
    add("make_mesh", lambda: (jax.make_mesh((n,), ("x",)), emesh, emesh.devices))
    add("make_mesh_types", lambda: jax.make_mesh(two, ("x", "y"), axis_types=(
        AxisType.Explicit, AxisType.Auto)))
    add("make_mesh_too_big", lambda: jax.make_mesh((8,), ("x",)))
    add("make_mesh_names", lambda: jax.make_mesh((n,), ("x", "y")))
    add("make_mesh_devices", lambda: jax.make_mesh((1,), ("x",), devices=devs[-1:]).devices)
    add("abstract_mesh", lambda: (AbstractMesh((2, 2), ("x", "y")),
                                  AbstractMesh((2,), ("x",), axis_types=(AxisType.Explicit,))))
    add("abstract_mesh_attrs", lambda: (AbstractMesh((2, 3), ("x", "y")).shape,
                                        AbstractMesh((2, 3), ("x", "y")).size,
                                        AbstractMesh((2, 3), ("x", "y")).axis_sizes,
                                        AbstractMesh((), ()).empty))
    add("abstract_mesh_eq", lambda: (AbstractMesh((2,), ("x",)) == AbstractMesh((2,), ("x",)),
                                     mesh.abstract_mesh == AbstractMesh(two, ("x", "y"))))
    add("abstract_mesh_devices", lambda: AbstractMesh((2,), ("x",)).devices)
    add("get_abstract_mesh", lambda: jax.sharding.get_abstract_mesh())
    add("get_mesh", lambda: jax.sharding.get_mesh())
    add("set_mesh_context", in_mesh(mesh, lambda: (jax.sharding.get_abstract_mesh(),
                                                   jax.sharding.get_mesh())))
    add("set_mesh_restores", lambda: (in_mesh(mesh, lambda: 0)(),
                                      jax.sharding.get_abstract_mesh())[1])
    add("set_mesh_bad", lambda: jax.set_mesh("mesh"))
    add("set_mesh_in_jit", lambda: jax.jit(lambda v: jax.set_mesh(mesh) and v)(1.0))
    add("use_abstract_mesh", lambda: _use_abstract(jax, AbstractMesh((n,), ("z",))))
    add("with_mesh_deprecated", lambda: _with_mesh(jax, mesh1))
    # NamedSharding
    add("ns_repr", lambda: (repr(s), str(s), s.memory_kind, s.mesh, s.spec))
    for name, spec, shape in [("xy", P("x", "y"), (4, 6)), ("xy_3d", P("x", "y"), (4, 6, 3)),
                              ("none_y", P(None, "y"), (4, 4)), ("yx", P("y", "x"), (4, 4)),
                              ("tuple_xy", P(("x", "y")), (8, 2)),
                              ("tuple_yx", P(("y", "x")), (8, 2)), ("empty", P(), (4, 4)),
                              ("unconstrained", P(P.UNCONSTRAINED, "x"), (4, 4)),
                              ("scalar", P(), ())]:
        ns = NamedSharding(mesh, spec)
        add(f"ns_{name}", lambda ns=ns, shape=shape: (
            sorted((d.id, i) for d, i in ns.devices_indices_map(shape).items()),
            ns.shard_shape(shape), ns.is_fully_replicated))
    add("ns_mesh_4x1", lambda: NamedSharding(Mesh(np.array(devs).reshape(n, 1), ("x", "y")),
                                             P("x", "y")).devices_indices_map((4, 6)))
    add("ns_indivisible", lambda: s.shard_shape((3, 6)))
    add("ns_indivisible_map", lambda: s.devices_indices_map((4, 5)))
    add("ns_rank", lambda: s.shard_shape((4,)))
    add("ns_unknown_axis", lambda: NamedSharding(mesh, P("z")))
    add("ns_duplicate", lambda: NamedSharding(mesh, P("x", "x")))
    add("ns_tuple_spec", lambda: NamedSharding(mesh, ("x",)))
    add("ns_unconstrained_explicit", lambda: NamedSharding(emesh, P(P.UNCONSTRAINED)))
    add("ns_unreduced_auto", lambda: NamedSharding(mesh, P(unreduced={"x"})))
    add("ns_unreduced_explicit", lambda: NamedSharding(emesh, P(None, unreduced={"x"})))
    add("ns_props", lambda: (s.is_fully_addressable, s.num_devices,
                             sorted(d.id for d in s.device_set),
                             sorted(d.id for d in s.addressable_devices)))
    add("ns_eq", lambda: (s == NamedSharding(mesh, P("x", "y")),
                          s == NamedSharding(mesh, P("x", "y"), memory_kind="device"),
                          s == NamedSharding(mesh, P("x")),
                          hash(s) == hash(NamedSharding(mesh, P("x", "y")))))
    add("ns_memory_kind", lambda: (NamedSharding(mesh, P(), memory_kind="pinned_host"),
                                   s.with_memory_kind("device")))
    add("ns_memory_kind_bad", lambda: NamedSharding(mesh, P(), memory_kind="foo"))
    add("ns_update", lambda: s.update(spec=P("x")))
    add("ns_abstract", lambda: NamedSharding(mesh.abstract_mesh, P("x")))
    add("ns_abstract_device_set", lambda: NamedSharding(mesh.abstract_mesh, P("x")).device_set)
    add("ns_equivalent", lambda: (
        NamedSharding(mesh, P("x")).is_equivalent_to(NamedSharding(mesh, P("x", None)), 2),
        NamedSharding(mesh, P("x")).is_equivalent_to(NamedSharding(mesh, P("y")), 2)))
    add("ns_isinstance", lambda: (isinstance(s, jax.sharding.Sharding),
                                  isinstance(SingleDeviceSharding(devs[0]),
                                             jax.sharding.Sharding)))
    # SingleDeviceSharding
    sd = SingleDeviceSharding(devs[-1])
    add("sds", lambda: (sd, sd.memory_kind, sd.num_devices, sd.devices_indices_map((2, 3)),
                        sd.shard_shape((2, 3)), sd.is_fully_replicated,
                        sd.is_fully_addressable))
    add("sds_eq", lambda: (sd == SingleDeviceSharding(devs[-1]),
                           sd == SingleDeviceSharding(devs[-1], memory_kind="device"),
                           jax.sharding.make_single_device_sharding(devs[-1]) == sd))
    # Arrays and device_put
    add("device_class", lambda: (isinstance(devs[0], jax.Device), type(devs[0]) is jax.Device))
    add("array_default", lambda: (x.sharding, x.device, sorted(d.id for d in x.devices()),
                                  x.committed, x.is_fully_replicated))
    add("array_default_shards", lambda: [(sh.device.id, sh.index, sh.replica_id)
                                         for sh in x.addressable_shards])
    y = lambda: jax.device_put(x, s)  # noqa: E731
    add("put_named", lambda: (y(), y().sharding, y().sharding == s,
                              sorted(d.id for d in y().devices()), y().committed,
                              y().is_fully_replicated))
    add("put_named_device", lambda: y().device)
    add("put_named_shards", lambda: shards(y()))
    add("put_named_shard_repr", lambda: y().addressable_shards[0])
    add("put_named_addressable_data", lambda: y().addressable_data(0))
    add("put_named_values", lambda: np.asarray(y()).tolist())
    add("put_replicated_shards", lambda: shards(jax.device_put(jnp.arange(4.0),
                                                               NamedSharding(mesh, P("y")))))
    add("put_scalar", lambda: (jax.device_put(1.0, NamedSharding(mesh, P())),
                               shards(jax.device_put(1.0, NamedSharding(mesh, P())))))
    add("put_device", lambda: (jax.device_put(x, devs[-1]).sharding,
                               jax.device_put(x, devs[-1]).device,
                               jax.device_put(x, devs[-1]).committed,
                               [(sh.device.id, sh.index)
                                for sh in jax.device_put(x, devs[-1]).addressable_shards]))
    add("put_numpy", lambda: jax.device_put(np.ones((4, 2), np.float32), s).sharding)
    add("put_tree", lambda: jax.tree_util.tree_map(
        lambda a: a.sharding, jax.device_put({"a": x, "b": x},
                                             {"a": s, "b": NamedSharding(mesh, P())})))
    add("put_tree_prefix", lambda: [a.sharding for a in jax.device_put((x, x), s)])
    add("put_indivisible", lambda: jax.device_put(jnp.ones((3, 4)), s))
    add("put_rank", lambda: jax.device_put(jnp.ones(4), s))
    add("put_pspec_no_mesh", lambda: jax.device_put(x, P("x")))
    add("put_pspec_mesh", in_mesh(mesh, lambda: jax.device_put(x, P("x")).sharding))
    # building arrays from per-device pieces
    s1 = NamedSharding(mesh1, P("x"))
    data = np.arange(8.0)
    add("from_callback", lambda: (jax.make_array_from_callback((8,), s1, lambda i: data[i]),
                                  shards(jax.make_array_from_callback((8,), s1,
                                                                      lambda i: data[i]))))
    add("from_callback_calls", lambda: _callback_indices(jax, s1, data))
    add("from_callback_replicated", lambda: _callback_indices(
        jax, NamedSharding(mesh1, P()), data))
    add("from_callback_dtype", lambda: (
        jax.make_array_from_callback((8,), s1, lambda i: data[i], dtype=np.int32).dtype,
        jax.make_array_from_callback((8,), s1, lambda i: np.arange(8)[i]).dtype))
    add("from_callback_scalar", lambda: jax.make_array_from_callback(
        (), NamedSharding(mesh1, P()), lambda i: 3.0))
    add("from_callback_shape", lambda: jax.make_array_from_callback(
        (8,), s1, lambda i: np.arange(3.0)))
    add("from_callback_single", lambda: jax.make_array_from_callback(
        (2,), sd, lambda i: np.ones(2)).sharding)
    pieces = lambda: [jax.device_put(data[i * (8 // n):(i + 1) * (8 // n)], d)  # noqa: E731
                      for i, d in enumerate(devs)]
    add("from_single", lambda: (jax.make_array_from_single_device_arrays((8,), s1, pieces()),
                                shards(jax.make_array_from_single_device_arrays(
                                    (8,), s1, pieces()))))
    add("from_single_count", lambda: jax.make_array_from_single_device_arrays(
        (8,), s1, pieces()[:1] + pieces()[:1] if n == 1 else pieces()[:1]))
    add("from_single_shape", lambda: jax.make_array_from_single_device_arrays(
        (8,), s1, [a[:1] for a in pieces()]))
    add("from_single_indivisible", lambda: jax.make_array_from_single_device_arrays(
        (9,), s1, pieces()) if n > 1 else None)
    add("from_single_not_list", lambda: jax.make_array_from_single_device_arrays(
        (8,), s1, iter(pieces())))
    add("from_single_dtype", lambda: jax.make_array_from_single_device_arrays(
        (8,), s1, [a.astype(np.int32) if i == 0 else a for i, a in enumerate(pieces())]))
    add("from_process_local", lambda: jax.make_array_from_process_local_data(
        s1, data.astype(np.float32)).sharding)
    # with_sharding_constraint
    add("wsc_jaxpr", jaxpr(lambda a: lax.with_sharding_constraint(a, s), x))
    add("wsc_jaxpr_replicated", jaxpr(lambda a: lax.with_sharding_constraint(
        a, NamedSharding(mesh, P())), x))
    add("wsc_jaxpr_unconstrained", jaxpr(lambda a: lax.with_sharding_constraint(
        a, NamedSharding(mesh, P(P.UNCONSTRAINED, "y"))), x))
    add("wsc_jaxpr_single", jaxpr(lambda a: lax.with_sharding_constraint(a, sd), x))
    add("wsc_jaxpr_tree", jaxpr(lambda a: lax.with_sharding_constraint(
        (a, a[0]), (s, NamedSharding(mesh, P("x")))), x))
    add("wsc_jaxpr_set_mesh", in_mesh(mesh, jaxpr(
        lambda a: lax.with_sharding_constraint(a, P("x")), x)))
    add("wsc_jaxpr_with_mesh", lambda: _with_mesh(jax, mesh1, jaxpr(
        lambda a: lax.with_sharding_constraint(a, P("x")), jnp.arange(8.0))))
    add("wsc_eager", lambda: (lax.with_sharding_constraint(x, s),
                              lax.with_sharding_constraint(x, s).sharding))
    add("wsc_eager_pspec", in_mesh(mesh, lambda: lax.with_sharding_constraint(x, P("x"))))
    add("wsc_pspec_no_mesh", lambda: lax.with_sharding_constraint(x, P("x")))
    add("wsc_indivisible", lambda: lax.with_sharding_constraint(jnp.ones((3, 4)), s))
    add("wsc_indivisible_jit", lambda: jax.jit(
        lambda a: lax.with_sharding_constraint(a, s))(jnp.ones((3, 4))))
    add("wsc_rank", lambda: lax.with_sharding_constraint(jnp.ones(4), s))
    add("wsc_none", lambda: lax.with_sharding_constraint(x, None))
    add("wsc_grad", lambda: jax.grad(lambda a: lax.with_sharding_constraint(a, s).sum())(x))
    # reshard
    es = NamedSharding(emesh, P("x"))
    add("reshard_eager", lambda: (jax.sharding.reshard(x, es),
                                  jax.sharding.reshard(x, es).sharding))
    add("reshard_pspec", in_mesh(emesh, lambda: jax.sharding.reshard(x, P("x")).sharding))
    add("reshard_auto", lambda: jax.sharding.reshard(x, s))
    add("reshard_pspec_no_mesh", lambda: jax.sharding.reshard(x, P("x")))
    add("reshard_is_top_level", lambda: jax.reshard is jax.sharding.reshard)
    # jit's in_shardings / out_shardings
    v = jnp.arange(8.0)
    add("jit_out", lambda: jax.jit(lambda a: a * 2, out_shardings=s1)(v).sharding)
    add("jit_in_out", lambda: jax.jit(lambda a: a * 2, in_shardings=s1,
                                      out_shardings=NamedSharding(mesh1, P()))(v).sharding)
    add("jit_in_indivisible", lambda: jax.jit(lambda a: a * 2, in_shardings=s1)(jnp.ones(3))
        if n > 1 else None)
    add("jit_out_tree", lambda: jax.tree_util.tree_map(
        lambda a: a.sharding, jax.jit(lambda a: (a, {"b": a}), out_shardings=(
            s1, {"b": NamedSharding(mesh1, P())}))(v)))
    add("jit_out_prefix", lambda: [a.sharding for a in jax.jit(
        lambda a: (a, a), out_shardings=s1)(v)])
    add("jit_out_pspec", lambda: jax.jit(lambda a: a, out_shardings=P("x"))(v))
    add("jit_out_pspec_mesh", in_mesh(mesh1, lambda: jax.jit(
        lambda a: a, out_shardings=P("x"))(v).sharding))
    add("jit_in_mismatch", lambda: jax.jit(lambda a: a, in_shardings=NamedSharding(
        mesh1, P()))(jax.device_put(v, s1)) if n > 1 else None)
    add("jit_out_single", lambda: jax.jit(lambda a: a, out_shardings=sd)(v).sharding)
    add("jit_decorator", lambda: jax.jit(out_shardings=s1)(lambda a: a + 1)(v).sharding)
    # out_sharding= on creation functions and samplers
    key = jax.random.key(0)
    for name, make in [
            ("zeros", lambda o: jnp.zeros((4, 4), out_sharding=o)),
            ("ones", lambda o: jnp.ones((4, 4), jnp.int32, out_sharding=o)),
            ("full", lambda o: jnp.full((4, 2), 3.0, out_sharding=o)),
            ("empty", lambda o: jnp.empty((4,), out_sharding=o).shape),
            ("zeros_like", lambda o: jnp.zeros_like(x, out_sharding=o)),
            ("ones_like", lambda o: jnp.ones_like(x, out_sharding=o)),
            ("full_like", lambda o: jnp.full_like(x, 2, out_sharding=o)),
            ("arange", lambda o: jnp.arange(8, out_sharding=o)),
            ("array", lambda o: jnp.array([[1.0, 2.0], [3.0, 4.0]], out_sharding=o)),
            ("asarray", lambda o: jnp.asarray(np.ones((2, 2)), out_sharding=o)),
            ("normal", lambda o: jax.random.normal(key, (4, 4), out_sharding=o)),
            ("uniform", lambda o: jax.random.uniform(key, (4,), out_sharding=o)),
            ("randint", lambda o: jax.random.randint(key, (4,), 0, 9, out_sharding=o)),
            ("bernoulli", lambda o: jax.random.bernoulli(key, 0.5, (4,), out_sharding=o)),
            ("gamma", lambda o: jax.random.gamma(key, 2.0, (4,), out_sharding=o)),
            ("exponential", lambda o: jax.random.exponential(key, (2, 2), out_sharding=o))]:
        placed = lambda make=make: _sharding_and_value(make(P("x")))  # noqa: E731
        add(f"out_sharding_{name}", in_mesh(emesh, placed))
        add(f"out_sharding_{name}_named", in_mesh(emesh, lambda make=make: _sharding_and_value(
            make(NamedSharding(emesh, P("x"))))))
    add("out_sharding_named_no_mesh", lambda: jnp.zeros((4, 4), out_sharding=NamedSharding(
        emesh, P("x"))).sharding)
    add("out_sharding_normal_no_mesh", lambda: jax.random.normal(key, (4, 4), out_sharding=(
        NamedSharding(emesh, P("x")))).sharding)
    add("out_sharding_auto", lambda: _cut_source(jnp.zeros, (4, 4), out_sharding=s))
    add("out_sharding_auto_normal", lambda: _cut_source(jax.random.normal, key, (4, 4),
                                                        out_sharding=s))
    add("out_sharding_pspec_no_mesh", lambda: jnp.zeros((4, 4), out_sharding=P("x")))
    add("out_sharding_single", lambda: jax.random.normal(key, (2,), out_sharding=sd))
    add("out_sharding_none_mesh", lambda: jnp.ones(3, out_sharding=NamedSharding(
        Mesh(np.empty((), dtype=object), ()), P())).sharding)
    add("out_sharding_and_device", lambda: jnp.zeros(3, device=devs[0], out_sharding=P()))
    add("device_kw_sharding", lambda: jnp.zeros((4, 6), device=s).sharding)
    add("device_kw_device", lambda: jnp.arange(3, device=devs[-1]).sharding)
    add("out_sharding_signatures", lambda: _signatures(jax, jnp))
    # types carry the splits over Explicit mesh axes (`f32[4@x,6]`)
    mixed = jax.make_mesh(two, ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto))
    ex = jax.device_put(x, NamedSharding(emesh, P("x", "y")))
    ex0 = jax.device_put(x, NamedSharding(emesh, P("x")))
    w = jax.device_put(jnp.ones((6, 4)), NamedSharding(emesh, P(None, "y")))
    add("type_placed", lambda: [str(jax.typeof(a)) for a in (ex, ex0, jax.device_put(
        x, NamedSharding(emesh, P(("x", "y")))), jax.device_put(x, NamedSharding(emesh, P())),
        jax.device_put(x, NamedSharding(mixed, P("x", "y"))), jax.device_put(
            x, NamedSharding(mixed, P(("y", "x")))), jax.device_put(x, s), x)])
    add("type_sharding", lambda: jax.typeof(ex).sharding)
    add("type_unplaced_sharding", lambda: jax.typeof(x).sharding)
    add("type_jaxpr_ops", jaxpr(lambda a, b: (jnp.sin(a) * 2, a.sum(1), a.sum(), a.T,
                                              a.reshape(24), a.reshape(2, 2, 6), a @ b,
                                              a[None], jnp.where(a > 0, a, 0.0),
                                              a.astype(jnp.int32)), ex, w))
    add("type_jaxpr_broadcast", jaxpr(lambda a, b: a[:, :1] + b[:1, :], ex0, jax.device_put(
        x, NamedSharding(emesh, P(None, "y")))))
    add("type_jaxpr_nested_jit", jaxpr(lambda a: jax.jit(lambda b: b * 2)(a) + 1, ex))
    add("type_jaxpr_mixed", jaxpr(lambda a: a * 2, jax.device_put(
        x, NamedSharding(mixed, P("x", "y")))))
    add("type_shard_map_inferred", in_mesh(emesh, lambda: _sharding_and_value(jax.jit(
        jax.shard_map(lambda a: a * 2, out_specs=P("x")))(ex0))))
    add("type_shard_map_jaxpr", in_mesh(emesh, jaxpr(jax.shard_map(
        lambda a, b: a * b, in_specs=(P("x"), P()), out_specs=P("x")), ex0, x)))
    add("type_grad", jaxpr(jax.grad(lambda a: (a * a).sum()), ex))
    for name, fn in (("fori", lambda a: lax.fori_loop(0, 3, lambda i, c: c * 2, a)),
                     ("cond", lambda a: lax.cond(a.sum() > 0, lambda b: b * 2,
                                                 lambda b: b + 1, a)),
                     ("while", lambda a: lax.while_loop(lambda c: c.sum() < 1e4,
                                                        lambda c: c * 2, a)),
                     ("remat", jax.checkpoint(lambda a: jnp.sin(a) * 2))):
        add(f"type_{name}_jaxpr", jaxpr(fn, ex))
        add(f"type_{name}_value", lambda fn=fn: _sharding_and_value(jax.jit(fn)(ex)))
    # eager operations on laid-out arrays: laid out as a jit of the operation would be
    for kind in ("Explicit", "Auto"):
        kmesh = jax.make_mesh(two, ("x", "y"), axis_types=(getattr(AxisType, kind),) * 2)
        a = jax.device_put(x, NamedSharding(kmesh, P("x", "y")))
        wy = jax.device_put(jnp.ones((6, 4)), NamedSharding(kmesh, P(None, "y")))
        by = jax.device_put(jnp.ones(4), NamedSharding(kmesh, P("y")))
        for name, fn in (
                ("mul", lambda: a * 2), ("add", lambda: a + a), ("sum0", lambda: a.sum(0)),
                ("T", lambda: a.T), ("sin", lambda: jnp.sin(a)), ("reshape", lambda: a.reshape(24)),
                ("where", lambda: jnp.where(a > 3, a, 0.0)), ("astype", lambda: a.astype(jnp.int32)),
                ("mean", lambda: a.mean()), ("max1", lambda: jnp.max(a, 1)),
                ("relu", lambda: jax.nn.relu(a)), ("addnp", lambda: a + np.ones(6, np.float32)),
                ("matmul", lambda: a @ jnp.ones((6, 4))), ("matmul_w", lambda: jnp.ones((4, 6)) @ wy),
                ("dot_bias", lambda: jnp.dot(jnp.ones((3, 6)), wy) + by),
                ("concat", lambda: jnp.concatenate([a, a], 1)),
                ("square", lambda: a ** 2), ("neg", lambda: -a), ("expand", lambda: a[None]),
                ("stack", lambda: jnp.stack([a, a])), ("eq", lambda: a == 3.0),
                ("argmax", lambda: jnp.argmax(a, 1)), ("clip", lambda: jnp.clip(a, 0, 5)),
                ("vmap", lambda: jax.vmap(lambda r: r * 2)(a)),
                ("jit_in_eager", lambda: jax.jit(jnp.sin)(a))):
            add(f"eager_layout_{kind}_{name}", lambda fn=fn: (
                _sharding_and_value(fn()), str(jax.typeof(fn()))))
    add("eager_layout_auto_at_set", lambda: _sharding_and_value(jax.device_put(x, NamedSharding(
        jax.make_mesh(two, ("x", "y"), axis_types=(AxisType.Auto,) * 2), P("x", "y"))).at[
            0, 0].set(1.0)))
    # device_put under jit: a device_put equation
    amesh1 = jax.make_mesh((n,), ("x",), axis_types=(AxisType.Auto,))
    emesh1 = jax.make_mesh((n,), ("x",))
    v8 = jnp.arange(8.0)
    for name, fn, args in (
            ("plain", lambda v: jax.device_put(v) * 2, (v8,)),
            ("two", lambda v, w: jax.device_put((v, w)), (v8, 2 * v8)),
            ("named", lambda v: jax.device_put(v, NamedSharding(emesh1, P("x"))) * 2, (v8,)),
            ("named_auto", lambda v: jax.device_put(v, NamedSharding(amesh1, P("x"))) * 2,
             (v8,)),
            ("device", lambda v: jax.device_put(v, devs[-1]), (v8,)),
            ("vmap", jax.vmap(lambda v: jax.device_put(v) * 2), (v8.reshape(2, 4),)),
            ("donate", lambda v: jax.device_put(v, donate=True), (v8,)),
            ("no_alias", lambda v: jax.device_put(v, may_alias=False), (v8,))):
        add(f"device_put_jit_{name}", jaxpr(fn, *args))
        add(f"device_put_jit_{name}_value", lambda fn=fn, args=args: jax.tree.map(
            _sharding_and_value, jax.jit(fn)(*args)))
    add("device_put_jit_grad_value", lambda: _sharding_and_value(jax.jit(jax.grad(
        lambda v: (jax.device_put(v, NamedSharding(emesh1, P("x"))) ** 2).sum()))(v8)))
    add("device_put_jit_pspec", in_mesh(emesh1, jaxpr(lambda v: jax.device_put(v, P("x")) * 2,
                                                      v8)))
    add("device_put_jit_pspec_value", in_mesh(emesh1, lambda: _sharding_and_value(jax.jit(
        lambda v: jax.device_put(v, P("x")) * 2)(v8))))
    # reshard and the axis-type switches
    reshard, auto_axes, explicit_axes = (jax.sharding.reshard, jax.sharding.auto_axes,
                                         jax.sharding.explicit_axes)
    add("type_reshard_jaxpr", jaxpr(lambda a: reshard(a, NamedSharding(emesh, P("x", None)))
                                    * 2, ex))
    add("type_reshard_pspec", in_mesh(emesh, jaxpr(lambda a: reshard(a, P(None, "x")), ex)))
    add("type_reshard_vmap", jaxpr(jax.vmap(lambda a: reshard(a, NamedSharding(
        emesh, P("y")))), ex0))
    add("type_reshard_none", lambda: reshard(x, None))
    add("type_reshard_grad", in_mesh(emesh, lambda: _sharding_and_value(jax.jit(jax.grad(
        lambda a: (reshard(a, P("x", None)) * (a + 1.0)).sum()))(ex))))
    add("type_reshard_jvp", in_mesh(emesh, lambda: [_sharding_and_value(v) for v in jax.jit(
        lambda a: jax.jvp(lambda b: reshard(b, P(None, "y")) * 2, (a,), (a,)))(ex)]))
    add("type_reshard_eager", in_mesh(emesh, lambda: (_sharding_and_value(reshard(
        ex, P(None, "x"))), str(jax.typeof(reshard(ex, P(None, "x")))))))
    scaled = lambda a: a * 2 + a.sum()  # noqa: E731
    add("auto_axes_jaxpr", in_mesh(emesh, jaxpr(auto_axes(scaled, out_sharding=P("x")), ex)))
    add("auto_axes_call_kwarg", in_mesh(emesh, jaxpr(
        lambda a: auto_axes(scaled)(a, out_sharding=P("x")), ex)))
    add("auto_axes_some", in_mesh(emesh, jaxpr(auto_axes(scaled, axes="y",
                                                         out_sharding=P("x", "y")), ex)))
    add("auto_axes_eager", in_mesh(emesh, lambda: (
        _sharding_and_value(auto_axes(scaled, out_sharding=P("x"))(ex)),
        str(jax.typeof(auto_axes(scaled, out_sharding=P("x"))(ex))))))
    add("auto_axes_missing", in_mesh(emesh, lambda: auto_axes(scaled)(ex)))
    amesh = jax.make_mesh(two, ("x", "y"), axis_types=(AxisType.Auto, AxisType.Auto))
    add("explicit_axes_jaxpr", in_mesh(amesh, jaxpr(explicit_axes(
        lambda a: a * 2 + a.sum(0), in_sharding=P("x")), x)))
    add("explicit_axes_eager", in_mesh(amesh, lambda: _sharding_and_value(explicit_axes(
        lambda a: a * 2, in_sharding=P("x"))(x))))
    add("explicit_axes_no_mesh", lambda: explicit_axes(lambda a: a, in_sharding=P("x"))(x))
    # pmap results
    add("pmap_sharding", lambda: jax.pmap(lambda a: a * 2)(jnp.ones((n, 2))).sharding)
    add("pmap_named", lambda: jax.pmap(lambda a: a, axis_name="i")(jnp.ones((n, 2))).sharding)
    add("pmap_shards", lambda: [(sh.device.id, sh.index) for sh in jax.pmap(
        lambda a: a)(jnp.ones((n, 2, 3))).addressable_shards])
    # top-level names
    add("top_level", lambda: (jax.NamedSharding is jax.sharding.NamedSharding,
                              jax.make_mesh.__name__, jax.set_mesh is jax.sharding.set_mesh,
                              callable(jax.make_array_from_callback), jax.Shard.__name__))
    add("sharding_names", lambda: sorted(n for n in dir(jax.sharding)
                                         if not n.startswith("_")))
    return out


def _sharding_and_value(a):
    return (a.sharding, a) if hasattr(a, "sharding") else a


def _cut_source(fn, *args, **kwargs):
    """Call fn; an error's text is kept up to its source location (a path on the machine)."""
    try:
        return fn(*args, **kwargs)
    except ValueError as e:
        raise ValueError(str(e).split(" This error occurs at source:")[0]) from None


def _use_abstract(jax, am):
    with jax.sharding.use_abstract_mesh(am):
        inside = jax.sharding.get_abstract_mesh()
    return inside, jax.sharding.get_abstract_mesh()


def _with_mesh(jax, mesh, thunk=None):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with mesh:
            value = (jax.sharding.get_abstract_mesh(), jax.sharding.get_mesh()) \
                if thunk is None else thunk()
    return value, [(w.category.__name__, str(w.message)) for w in caught]


def _callback_indices(jax, sharding, data):
    seen = []

    def cb(index):
        seen.append(index)
        return data[index]
    jax.make_array_from_callback((8,), sharding, cb)
    return seen


def _signatures(jax, jnp):
    import inspect
    names = {"random": ["ball", "bernoulli", "beta", "bits", "categorical", "cauchy",
                        "chisquare", "dirichlet", "exponential", "f", "gamma",
                        "generalized_normal", "geometric", "gumbel", "laplace", "loggamma",
                        "logistic", "lognormal", "maxwell", "multivariate_normal", "normal",
                        "orthogonal", "pareto", "permutation", "poisson", "rademacher",
                        "randint", "rayleigh", "t", "triangular", "truncated_normal",
                        "uniform", "wald"],
             "jnp": ["arange", "array", "asarray", "empty", "full", "full_like", "ones",
                     "ones_like", "zeros", "zeros_like"]}
    out = {}
    for module, fns in names.items():
        mod = jax.random if module == "random" else jnp
        for fn in fns:
            param = inspect.signature(getattr(mod, fn)).parameters.get("out_sharding")
            out[f"{module}.{fn}"] = None if param is None else (param.kind.name, param.default)
    return out


def _show_sets(value, np):
    """Sets (of devices) as sorted lists, so their order does not matter."""
    if isinstance(value, (set, frozenset)):
        return sorted((getattr(d, "id", d) for d in value), key=repr)
    if isinstance(value, tuple):
        return tuple(_show_sets(v, np) for v in value)
    if isinstance(value, list):
        return [_show_sets(v, np) for v in value]
    if isinstance(value, dict):
        return {k: _show_sets(v, np) for k, v in value.items()}
    return value


def run_all(jax, jnp, lax, np):
    return {name: repr_or_error(thunk, lambda value: repr(_show_sets(value, np)))
            for name, thunk in cases(jax, jnp, lax, np)}


def main() -> None:
    record_in_children(__file__, run_all, OUT, [("devices_4", 4), ("devices_1", 1)])


if __name__ == "__main__":
    main()
