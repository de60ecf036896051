"""Shardings carried by types (JAX's sharding in types): a value split over Explicit mesh axes
has them in its abstract value (`ShapedArray.explicit_sharding`, printed `f32[6@i]`).

An Array placed by a NamedSharding gives its type the Explicit part of that spec; while
tracing, each staged equation's results are typed by propagation.py's rules (the same rules
that lay jit's results out), keeping only Explicit axes.  Auto and Manual axes never appear in
types.  The typing rule is installed in staging once a mesh with an Explicit axis exists, so
programs that never make one pay nothing.
"""
from __future__ import annotations

import functools
import types
from typing import Any

import numpy as np

from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.trace import Tracer
from pyjax._src.parallel import propagation, size_one
from pyjax._src.parallel.sharding import NamedSharding, PartitionSpec
from pyjax._src.transforms import staging


def kept_entry(entry: Any, keep: Any) -> Any:
    """A spec entry reduced to the mesh axes of `keep` it names (None, one name, or a tuple)."""
    names = () if entry is None else entry if isinstance(entry, tuple) else (entry,)
    kept = tuple(n for n in names if n in keep)
    return None if not kept else kept[0] if len(kept) == 1 else kept


def type_sharding(mesh: Any, entries: tuple) -> NamedSharding | None:
    """The sharding a type carries for a value split as `entries` (one per axis) over `mesh`:
    over its abstract mesh, naming only Explicit axes (not those of size 1 while
    `jax.remove_size_one_mesh_axis_from_type` is on); None when none is left."""
    return _type_sharding(mesh, entries, size_one.active())


@functools.lru_cache(maxsize=512)
def _type_sharding(mesh: Any, entries: tuple, drop_size_one: bool) -> NamedSharding | None:
    explicit = frozenset(mesh.explicit_axes)
    if drop_size_one:
        explicit = frozenset(a for a in explicit if mesh.shape[a] != 1)
    kept = tuple(kept_entry(e, explicit) for e in entries)
    if all(e is None for e in kept):
        return None
    return NamedSharding(mesh.abstract_mesh, PartitionSpec(*kept))


def of_sharding(sharding: Any, rank: int) -> NamedSharding | None:
    """The type sharding of an Array laid out by `sharding` (only NamedShardings have one)."""
    if type(sharding) is not NamedSharding or not rank:
        return None
    return type_sharding(sharding.mesh, propagation.spec_entries(sharding, rank))


def broadcast_sharding(args: Any, shape: tuple) -> NamedSharding | None:
    """The split over Explicit mesh axes of traced `args` broadcast together to `shape`
    (JAX's broadcast_shardings, for jnp's broadcasting: per axis, the first operand that splits
    it at full size)."""
    typed = [(np.shape(a), a.aval.explicit_sharding) for a in args
             if isinstance(a, Tracer) and getattr(a.aval, "explicit_sharding", None)]
    if not typed:
        return None
    entries: list = [None] * len(shape)
    for operand_shape, sharding in typed:
        lead = len(shape) - len(operand_shape)
        for i, entry in enumerate(sharding.spec.partitions):
            if entry is not None and entries[lead + i] is None \
                    and operand_shape[i] == shape[lead + i]:
                entries[lead + i] = entry
    return type_sharding(typed[0][1].mesh, tuple(entries))


def _source_mesh(prim: Any, params: dict) -> Any:
    """The mesh of an equation that lays out its results itself (shard_map, a constraint, an
    `out_sharding=`), or None."""
    if prim.result_mesh is not None:
        return prim.result_mesh(params)
    return getattr(propagation.given_sharding(params), "mesh", None)


def _retyped(aval: Any, sharding: NamedSharding | None) -> Any:
    if type(aval) is not ShapedArray or aval.explicit_sharding == sharding:
        return aval
    return ShapedArray(aval.shape, aval.dtype, aval.weak_type, aval.vma, sharding)


def type_equation(prim: Any, atoms: list, params: dict, out: Any) -> Any:
    """The staged equation's result types with the shardings propagation gives them."""
    ins = [getattr(a.aval, "explicit_sharding", None) for a in atoms]
    mesh = next((s.mesh for s in ins if s is not None), None) or _source_mesh(prim, params)
    if mesh is None or not getattr(mesh, "axis_names", ()):
        return out
    many = prim.multiple_results
    outs = list(out) if many else [out]
    eqn = types.SimpleNamespace(
        primitive=prim, params=params, invars=atoms,
        outvars=[types.SimpleNamespace(aval=o) for o in outs])
    specs = [None if s is None else s.spec.partitions for s in ins]
    sizes = propagation.mesh_sizes(mesh)
    got = propagation.eqn_specs(eqn, specs, sizes)
    if got is None:  # no rule: whatever abstract evaluation kept
        return out
    typed = [_retyped(o, None if s is None or not hasattr(o, "shape")
                      else type_sharding(mesh, tuple(s)))
             for o, s in zip(outs, got)]
    return typed if many else typed[0]


def activate() -> None:
    """Type staged equations by their shardings from now on (a mesh has an Explicit axis)."""
    staging.sharding_typing = type_equation
