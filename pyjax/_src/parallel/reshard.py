"""`jax.sharding.reshard` and the axis-type switches built on it, `auto_axes` and
`explicit_axes`.

Eagerly, reshard lays a concrete array out anew (its values unchanged).  Traced, it stages a
`reshard` equation whose result's type carries the new split over Explicit mesh axes
(explicit.py types it from propagation's rule); on the host devices its value is its operand.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple

import numpy as np

from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.primitive import Primitive
from pyjax._src.parallel import mesh as mesh_lib
from pyjax._src.parallel import propagation
from pyjax._src.parallel.explicit import kept_entry
from pyjax._src.parallel.mesh import AbstractMesh, AxisType
from pyjax._src.parallel.placement import canonicalize_sharding
from pyjax._src.parallel.sharding import NamedSharding, PartitionSpec, placed
from pyjax._src.transforms import ad


def reshard(xs: Any, out_shardings: Any) -> Any:
    """Each array of the pytree `xs` laid out by its entry of `out_shardings` (a prefix of
    `xs`; NamedShardings or PartitionSpecs over Explicit mesh axes).  The values are
    unchanged."""
    from pyjax._src.transforms.batching import _broadcast_prefix
    from pyjax._src.tree_util import tree_flatten, tree_unflatten
    leaves, tree = tree_flatten(xs)
    targets = _broadcast_prefix(out_shardings, tree_unflatten(tree, leaves), "out_shardings")
    return tree_unflatten(tree, [_reshard_leaf(x, t) for x, t in zip(leaves, targets)])


def _reshard_leaf(x: Any, target: Any) -> Any:
    sharding = canonicalize_sharding(target, "reshard")
    if sharding is None:
        raise ValueError("Reshard should only be used with out_shardings which are non-None "
                         f"and have a non-empty mesh. Got sharding {target}.")
    ndim = np.ndim(x)
    if not isinstance(x, ArrayImpl):  # traced (or a Python scalar): a reshard equation
        dst = NamedSharding(sharding.mesh, sharding.spec._normalized_spec_for_aval(ndim))
        concrete = target.mesh if isinstance(target, NamedSharding) and isinstance(
            target.mesh, mesh_lib.Mesh) else None
        return reshard_p.bind(x, dst_sharding=dst, concrete_mesh=concrete)
    mesh = mesh_lib.get_concrete_mesh()
    if mesh.empty:
        mesh = target.mesh if isinstance(target, NamedSharding) else mesh
    concrete = NamedSharding(mesh, sharding.spec._normalized_spec_for_aval(ndim))
    concrete.shard_shape(x.shape)
    return placed(x, concrete)


def _batch(vals: list, dims: list, *, dst_sharding: NamedSharding, concrete_mesh: Any
           ) -> tuple:
    """The batch axis keeps the split its operand's type gives it."""
    (x,), (d,) = vals, dims
    if d is not None:
        spec = list(dst_sharding.spec.partitions)
        typed = getattr(getattr(x, "aval", None), "explicit_sharding", None)
        spec.insert(d, None if typed is None else typed.spec.partitions[d])
        dst_sharding = NamedSharding(dst_sharding.mesh, PartitionSpec(*spec))
    return reshard_p.bind(x, dst_sharding=dst_sharding, concrete_mesh=concrete_mesh), d


def _transpose(ct: Any, x: Any, *, dst_sharding: NamedSharding, concrete_mesh: Any) -> list:
    """The cotangent goes back to the operand's layout."""
    if type(ct) is ad.Zero:
        return [ct]
    typed = getattr(x.aval, "explicit_sharding", None)
    back = typed if typed is not None else NamedSharding(
        dst_sharding.mesh, PartitionSpec(*[None] * len(x.aval.shape)))
    return [reshard_p.bind(ct, dst_sharding=back, concrete_mesh=concrete_mesh)]


def _pp(eqn: Any, context: Any) -> Any:
    """Printed without its parameters (the result's type shows the layout), as JAX does."""
    from pyjax._src.core.jaxpr import pp_eqn_standard
    return pp_eqn_standard(eqn, context, params={})


def _sharding_rule(eqn: Any, ins: list, sizes: dict) -> list:
    return [propagation.Given(eqn.params["dst_sharding"].spec, len(eqn.outvars[0].aval.shape))]


def _result_mesh(params: dict) -> Any:
    """The concrete mesh the value goes to (the target's own mesh may be abstract)."""
    concrete = params.get("concrete_mesh")
    return concrete if isinstance(concrete, mesh_lib.Mesh) else params["dst_sharding"].mesh


reshard_p = Primitive("reshard")
reshard_p.impl = lambda x, **params: x
reshard_p.abstract_eval = lambda aval, **params: aval.update()
reshard_p.batch = _batch
reshard_p.pp_rule = _pp
reshard_p.sharding_rule = _sharding_rule
reshard_p.result_mesh = _result_mesh
ad.deflinear(reshard_p, _transpose)


# -- switching mesh axes between Auto and Explicit for a function ------------------------------

class _MeshSwitch(NamedTuple):
    prev: AbstractMesh
    new: AbstractMesh
    axes: tuple


def _switched_mesh(axes: Any, kind: AxisType, api: str, shardings: Any = None
                   ) -> _MeshSwitch | None:
    """The context mesh (or the shardings' own) with `axes` (default: all) made `kind`; None
    when there is no mesh at all."""
    from pyjax._src.tree_util import tree_flatten
    current = mesh_lib.get_abstract_mesh()
    given = None
    for s in tree_flatten(shardings)[0]:
        if isinstance(s, NamedSharding):
            mesh = s.mesh.abstract_mesh
            if given is not None and given != mesh:
                raise ValueError(f"Shardings passed to {api} should have the same mesh. Got "
                                 f"one mesh {given} and another {s.mesh}")
            given = mesh
    if given is None and current.empty:
        return None
    if given is not None and not current.empty and given != current:
        raise ValueError(f"Context mesh {current} must match the mesh passed to shardings "
                         f"{given}. Recommended approach is to use `jax.set_mesh` context "
                         "manager.")
    mesh = current if not current.empty else given
    axes = mesh.axis_names if axes is None else axes if isinstance(axes, tuple) else (axes,)
    for a in axes:
        if mesh._name_to_type[a] == AxisType.Manual:
            raise NotImplementedError(
                "Going from `Manual` AxisType to `Auto` or `Explicit` AxisType is not allowed. "
                "Please file a bug at https://github.com/jax-ml/jax/issues with your use case")
    return _MeshSwitch(mesh, mesh.update_axis_types({a: kind for a in axes}), tuple(axes))


def _explicit_part(x: Any, mesh: AbstractMesh) -> PartitionSpec:
    """x's type's spec keeping only the axes that are Explicit in `mesh`."""
    from pyjax._src.api import typeof
    keep = set(mesh.explicit_axes)
    return PartitionSpec(*[kept_entry(e, keep) for e in typeof(x).sharding.spec.partitions])


def _required(given: Any, kwargs: dict, name: str) -> Any:
    if given is not None:
        return given
    if name not in kwargs:
        raise TypeError(f"Missing required keyword argument: '{name}'")
    return kwargs.pop(name)


def auto_axes(f: Callable | None = None, /, *, axes: Any = None,
              out_sharding: Any = None) -> Callable:
    """`f` run with mesh `axes` (default: all) Auto: its arguments lose their splits over them,
    and its results are laid out by `out_sharding` (here or at the call)."""
    if f is None:
        return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        from pyjax._src.tree_util import tree_map
        target = _required(out_sharding, kwargs, "out_sharding")
        switch = _switched_mesh(axes, AxisType.Auto, "auto_axes", target)
        if switch is None or set(switch.prev.auto_axes) == set(switch.axes):
            return f(*args, **kwargs)
        with mesh_lib.use_abstract_mesh(switch.new):
            args = reshard(args, tree_map(lambda a: _explicit_part(a, switch.new), args))
            out = f(*args, **kwargs)
        return reshard(out, target)
    return wrapped


def explicit_axes(f: Callable | None = None, /, *, axes: Any = None,
                  in_sharding: Any = None) -> Callable:
    """`f` run with mesh `axes` (default: all) Explicit: its arguments laid out by
    `in_sharding` (here or at the call), its results keeping the splits the outer mesh types."""
    if f is None:
        return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        from pyjax._src.tree_util import tree_map
        given = _required(in_sharding, kwargs, "in_sharding")
        switch = _switched_mesh(axes, AxisType.Explicit, "explicit_axes")
        if switch is None:
            raise ValueError("Context mesh cannot be empty. Please use `jax.set_mesh` API to "
                             "enter into a mesh context when using `explicit_axes` API.")
        with mesh_lib.use_abstract_mesh(switch.new):
            args = reshard(args, given)
            out = f(*args, **kwargs)
        outer = mesh_lib.get_abstract_mesh()
        return reshard(out, tree_map(lambda o: _explicit_part(o, outer), out))
    return wrapped
