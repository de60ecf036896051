"""Where jit's results live when its arguments are laid out over a mesh.

A forward pass over the traced jaxpr gives every value a spec: per array axis, the mesh
axes it is split over (a PartitionSpec entry) or None.  Each primitive's `sharding_rule`
attribute, set beside the primitive from the rules below (or its own), says how specs flow,
as JAX decides for these operations (its sharding rules on Explicit mesh axes,
GSPMD's propagation on Auto ones — the same answers for them): elementwise operations keep
their operands' splits, reductions drop the reduced axes, `dot_general` keeps batch and free
axes, transposes permute, a `shard_map` gives its `out_specs`, a sharding constraint or an
`out_sharding=` its own.  A primitive without a rule gives replicated results.  Primitives
that lay their results out over a mesh named in their parameters (shard_map, reshard, a
sharding constraint, device_put to a NamedSharding) also say which mesh (`result_mesh`).  The results are NamedShardings over
the arguments' mesh: full-rank specs on an Explicit mesh (`P(None,)`), trailing Nones dropped
on an Auto one (`P('x',)`, `P()`), as JAX prints them.
"""
from __future__ import annotations

from typing import Any, Callable

from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Literal
from pyjax._src.parallel.mesh import AxisType
from pyjax._src.parallel.sharding import NamedSharding, PartitionSpec

Spec = tuple  # one entry per axis: None, a mesh axis name, or a tuple of names


class Given(tuple):
    """A spec stated by the program (a shard_map's out_specs, a constraint): a result that is
    this value keeps the PartitionSpec as written on an Auto mesh (`P('i', None)` stays so;
    on an Explicit one the result's type speaks: full rank)."""

    spec: PartitionSpec

    def __new__(cls, spec: PartitionSpec, rank: int) -> "_Given":
        out = super().__new__(cls, spec_entries(spec, rank))
        out.spec = spec
        return out


class MeshSizes(dict):
    """A mesh's axis sizes by name, and whether it has an Explicit axis (the rules' view of
    the mesh: a few rules type Explicit axes as JAX does and lay Auto ones out as GSPMD)."""

    explicit: bool


def mesh_sizes(mesh: Any) -> MeshSizes:
    sizes = MeshSizes(zip(mesh.axis_names, mesh.axis_sizes))
    sizes.explicit = AxisType.Explicit in getattr(mesh, "axis_types", ())
    return sizes


def output_shardings(closed: ClosedJaxpr, in_shardings: list) -> list | None:
    """The NamedSharding of each output of `closed` given its inputs' shardings (None for an
    input with no mesh layout), or None when neither an input nor the program itself (a
    device_put or reshard to a mesh, a constraint, a shard_map) lays values out over a mesh
    (or inputs use different meshes): the results then stay on the default device."""
    jaxpr = closed.jaxpr
    meshes = {s.mesh for s in in_shardings if isinstance(s, NamedSharding)}
    if not meshes:
        meshes = {m for m in [program_mesh(jaxpr)] if m is not None}
    if len(meshes) != 1:
        return None
    (mesh,) = meshes
    specs = [spec_entries(s, len(v.aval.shape)) if isinstance(s, NamedSharding) else None
             for s, v in zip(in_shardings, jaxpr.invars)]
    outs = propagate(jaxpr, specs, mesh_sizes(mesh))
    return shardings_on(mesh, outs, [v.aval for v in jaxpr.outvars])


def shardings_on(mesh: Any, specs: list, avals: list) -> list:
    """NamedShardings over `mesh` for values of `avals` split as `specs` say, as JAX prints
    them: full rank on a mesh with an Explicit axis, trailing Nones dropped otherwise (a
    spec the program stated kept as written there)."""
    explicit = any(t == AxisType.Explicit for t in getattr(mesh, "axis_types", ()))
    out = [NamedSharding(mesh, spec.spec if type(spec) is Given and not explicit
                         else _partition_spec(spec, len(aval.shape), explicit))
           for spec, aval in zip(specs, avals)]
    from pyjax._src.parallel import size_one
    if explicit and size_one.active():  # the split its type gives (explicit.type_sharding)
        out = [s.update(spec=size_one.without_size_one(s.spec, mesh, mesh.explicit_axes))
               for s in out]
    return out


def program_mesh(jaxpr: Jaxpr) -> Any:
    """The (concrete) mesh the first of `jaxpr`'s equations that lays its result out over one
    names (inside a nested jit too: jit of pmap's shard_map), or None."""
    from pyjax._src.parallel.mesh import Mesh
    for eqn in jaxpr.eqns:
        named = eqn.primitive.result_mesh
        mesh = None if named is None else named(eqn.params)
        if mesh is None and eqn.primitive.name == "jit":
            mesh = program_mesh(eqn.params["jaxpr"].jaxpr)
        if isinstance(mesh, Mesh):
            return mesh
    return None


def propagate(jaxpr: Jaxpr, in_specs: list, sizes: dict) -> list:
    """The spec of each output of `jaxpr` (None: nothing known, i.e. replicated); `sizes`:
    the mesh's axis sizes."""
    env: dict = dict(zip(jaxpr.invars, in_specs))

    def read(v: Any) -> Spec | None:
        return None if type(v) is Literal else env.get(v)

    for eqn in jaxpr.eqns:
        outs = eqn_specs(eqn, [read(v) for v in eqn.invars], sizes)
        for v, s in zip(eqn.outvars, outs or [None] * len(eqn.outvars)):
            env[v] = s
    return [read(v) for v in jaxpr.outvars]


def eqn_specs(eqn: Any, ins: list, sizes: dict) -> list | None:
    """The specs of one equation's outputs given its operands' (None where unknown), or None
    when no rule speaks for this primitive (also read by explicit.py while staging)."""
    given = given_sharding(eqn.params)
    if given is not None:
        return [Given(getattr(given, "spec", given), len(eqn.outvars[0].aval.shape))]
    prim = eqn.primitive
    rule = prim.sharding_rule
    if rule is None:
        return None
    if prim.result_mesh is not None or any(s is not None for s in ins) or rule is nested_call:
        return rule(eqn, ins, sizes)  # (a nested call's body may lay its results out itself)
    return [None] * len(eqn.outvars)


def given_sharding(params: dict) -> Any:
    """The layout an equation's parameters state for its result (`out_sharding=`, or the
    `sharding` of a broadcast_in_dim or reshape that jnp typed), or None."""
    given = params.get("out_sharding")
    return params.get("sharding") if given is None else given


def spec_entries(sharding: Any, rank: int) -> Spec:
    """A NamedSharding's or PartitionSpec's entries, padded with None to `rank`."""
    spec = sharding.spec if isinstance(sharding, NamedSharding) else sharding
    parts = tuple(p if p != PartitionSpec.UNCONSTRAINED else None for p in spec.partitions)
    return (parts + (None,) * rank)[:rank]


def _partition_spec(spec: Spec | None, rank: int, explicit: bool) -> PartitionSpec:
    parts = list(spec) if spec is not None else [None] * rank
    if not explicit or not rank:
        while parts and parts[-1] is None:
            parts.pop()
    return PartitionSpec(*parts)


# ---------------------------------------------------------------------------------------------
# The common rules (a primitive names its rule as `sharding_rule` beside its definition;
# rules of one primitive only live with it: reshape's in shape.py, dot_general's in dot.py)
# ---------------------------------------------------------------------------------------------

def elementwise(eqn: Any, ins: list, sizes: dict) -> list:
    """Elementwise (and concatenate): each axis split as the first operand of the result's
    rank that splits it."""
    rank = len(eqn.outvars[0].aval.shape)
    out: list = [None] * rank
    used: set = set()
    for spec, v in zip(ins, eqn.invars):
        if spec is None or len(spec) != rank:
            continue
        for i, entry in enumerate(spec):
            if out[i] is None and entry is not None and not (names(entry) & used):
                out[i] = entry
                used |= names(entry)
    return [tuple(out)] * len(eqn.outvars)


def names(entry: Any) -> set:
    if entry is None:
        return set()
    return set(entry) if isinstance(entry, tuple) else {entry}


def reduction(eqn: Any, ins: list, sizes: dict) -> list:
    axes = set(eqn.params["axes"])
    kept = tuple(e for i, e in enumerate(ins[0]) if i not in axes) if ins[0] else None
    return [kept] * len(eqn.outvars)


def same_size_axes(eqn: Any, ins: list, sizes: dict) -> list:
    """slice, pad, rev, dynamic_slice ...: every axis keeps its split."""
    return [ins[0]] + [None] * (len(eqn.outvars) - 1)


def operand_layout(eqn: Any, ins: list, sizes: dict) -> list:
    """scatter and its kin: the result is the operand updated, laid out as it is."""
    return [ins[0]] + [None] * (len(eqn.outvars) - 1)


def typed_spec(aval: Any) -> Spec | None:
    """The spec a value's type carries (its split over Explicit mesh axes), if any."""
    typed = getattr(aval, "explicit_sharding", None)
    return None if typed is None else tuple(typed.spec.partitions)


def nested_call(eqn: Any, ins: list, sizes: dict) -> list:
    """A nested jit (or custom-derivative call, checkpoint): its own jaxpr, propagated."""
    inner = eqn.params.get("jaxpr") or eqn.params.get("call_jaxpr")
    inner = getattr(inner, "jaxpr", inner)
    if not isinstance(inner, Jaxpr) or len(inner.invars) != len(ins):
        return [None] * len(eqn.outvars)
    return propagate(inner, ins, sizes)
