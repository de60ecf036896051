"""`jax.remove_size_one_mesh_axis_from_type`: while it is on, mesh axes of size 1 are left out
of what types say (an Explicit split prints `f32[8@x]`, not `f32[8@(x,y)]`, over a (4, 1)
mesh; a shard_map body's values do not vary over them), of with_sharding_constraint's check
of a type against its spec, and of the axes psum, pmean and psum_scatter reduce and pcast
casts over (over size-1 axes only, they give x itself).  Such axes change no value, only
names; the option keys traces (config's trace options), as in JAX."""
from __future__ import annotations

from typing import Any

from pyjax._src.config import config


def active() -> bool:
    """Whether size-1 mesh axes are being left out of types."""
    return config.remove_size_one_mesh_axis_from_type


def _sizes(mesh: Any) -> dict:
    return dict(zip(mesh.axis_names, mesh.axis_sizes))


def _kept(entry: Any, drop: frozenset) -> Any:
    """One spec entry without the axes `drop` names (a tuple stays a tuple, as in JAX)."""
    from pyjax._src.parallel.sharding import PartitionSpec
    if entry is None or entry is PartitionSpec.UNCONSTRAINED:
        return entry
    if isinstance(entry, tuple):
        return tuple(n for n in entry if n not in drop)
    return None if entry in drop else entry


def without_size_one(spec: Any, mesh: Any, among: Any = None) -> Any:
    """`spec` with `mesh`'s axes of size 1 (of those `among` names, if given) left out (JAX's
    remove_size_one_mesh_axis)."""
    drop = frozenset(n for n, s in _sizes(mesh).items()
                     if s == 1 and (among is None or n in among))
    return spec.update(partitions=[_kept(e, drop) for e in spec.partitions],
                       unreduced=spec.unreduced - drop, reduced=spec.reduced - drop)


def kept_axes(mesh: Any, axes: frozenset) -> frozenset:
    """`axes` (of `mesh`) less those of size 1 while the option is on."""
    if not active():
        return axes
    sizes = _sizes(mesh)
    return frozenset(a for a in axes if sizes[a] != 1)


def _context_sizes() -> dict:
    """Mesh axis sizes in context: a shard_map body's manual axes over the context mesh's."""
    from pyjax._src.parallel import collectives, mesh as mesh_lib
    return {**_sizes(mesh_lib.get_abstract_mesh()), **collectives.manual_axis_sizes()}


def collective_axes(names: tuple) -> tuple:
    """A collective's axis names less the mesh axes of size 1 in context while the option is
    on (axes of vmap or pmap, not mesh axes, stay: JAX's _maybe_skip_one_sized_axes)."""
    if not active():
        return names
    sizes = _context_sizes()
    return tuple(n for n in names if sizes.get(n) != 1)


def dropped_manual_axes() -> frozenset:
    """The manual axes of size 1 a shard_map body is traced or run over, while the option is
    on: its values' varying axes never name them."""
    if not active():
        return frozenset()
    from pyjax._src.parallel import collectives
    return frozenset(n for n, s in collectives.manual_axis_sizes().items() if s == 1)
