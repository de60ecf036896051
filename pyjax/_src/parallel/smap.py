"""`jax.smap`: shard_map over one mesh axis, its specs given vmap-style as the axis of each
argument (and result) that the mesh axis splits.  The mesh is the context's
(`jax.set_mesh`); the body is checked for varying axes (check_vma) as JAX does."""
from __future__ import annotations

from typing import Any, Callable

from pyjax._src.parallel import mesh as mesh_lib
from pyjax._src.parallel.sharding import PartitionSpec
from pyjax._src.parallel.shard_map import Infer, shard_map
from pyjax._src.tree_util import tree_leaves, tree_map


def _axes_to_pspec(axis_name: Any, axis: int | None) -> PartitionSpec:
    """vmap's `axis` as a spec: the mesh axis splitting array axis `axis` (None: unsplit)."""
    if axis is None:
        return PartitionSpec()
    return PartitionSpec(*[None] * axis, axis_name)


def smap(f: Callable | None = None, /, *, in_axes: Any = Infer, out_axes: Any,
         axis_name: Any) -> Any:
    """Map `f` over the blocks that mesh axis `axis_name` splits its arguments into:
    `in_axes` (an int, None, or a tuple with one entry per positional argument; left out,
    inferred from the arguments' shardings when the axis is Explicit) names the split array
    axis of each argument, `out_axes` that of each result."""
    if f is None:
        return lambda g: _smap(g, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    return _smap(f, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)


def _smap(f: Callable, *, in_axes: Any, out_axes: Any, axis_name: Any) -> Callable:
    if isinstance(axis_name, (list, tuple)):
        raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got {axis_name}")
    if in_axes is not None and in_axes is not Infer and not isinstance(in_axes, (int, tuple)):
        raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or a tuple of "
                        "entries corresponding to the positional arguments passed to the "
                        f"function, but got {in_axes}.")
    if in_axes is not Infer and not all(isinstance(a, int) for a in tree_leaves(in_axes)):
        raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or (nested) "
                        f"container with those types as leaves, but got {in_axes}.")
    if not all(isinstance(a, int) for a in tree_leaves(out_axes)):
        raise TypeError("smap out_axes must be an int, None, or (nested) container with those "
                        f"types as leaves, but got {out_axes}.")
    to_spec = lambda axes: tree_map(lambda a: _axes_to_pspec(axis_name, a), axes,
                                    is_leaf=lambda a: a is None)
    in_specs = Infer if in_axes is Infer else to_spec(in_axes)
    mapped = shard_map(f, in_specs=in_specs, out_specs=to_spec(out_axes),
                       axis_names=frozenset({axis_name}), check_vma=True)
    if in_axes is not Infer:
        return mapped

    def inferred(*args: Any) -> Any:
        """in_axes left out: only an Explicit mesh axis says how arguments are split."""
        mesh = mesh_lib.get_abstract_mesh()
        if not mesh.empty and axis_name in mesh.axis_names:
            kind = dict(zip(mesh.axis_names, mesh.axis_types))[axis_name]
            if kind != mesh_lib.AxisType.Explicit:
                raise TypeError(f"in_axes was not specified when "
                                f"axis_name={frozenset({axis_name})} was of type {kind}")
        return mapped(*args)
    return inferred
