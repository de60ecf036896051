"""pmap: run a function on each local device's slice of the leading axis.

The host devices share one memory, so pmap is compiled once as jit of vmap over the stacked
device axis; collectives over `axis_name` work as under vmap.  Results record which device
holds which slice (`sharding`, `devices()`, `addressable_shards`).
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src import caches
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.trace import trace_state
from pyjax._src.parallel.collectives import mark_device_axis
from pyjax._src.parallel.devices import Device, local_devices
from pyjax._src.transforms.batching import vmap
from pyjax._src.transforms.jit import jit
from pyjax._src.tree_util import tree_flatten, tree_map

PMAP_AXIS = "_internal_pmap_axis_name"


class Mesh:
    """Devices along named axes: one axis for pmap's placement, none for the empty mesh that
    `with_sharding_constraint` records as its context."""

    def __init__(self, devices: Sequence[Device], axis_name: str | None):
        self.devices = np.array(devices, dtype=object)
        self.axis_names = () if axis_name is None else (axis_name,)

    @property
    def empty(self) -> bool:
        return not self.axis_names

    def __repr__(self) -> str:
        if self.empty:
            return "Mesh()"
        return f"Mesh('{self.axis_names[0]}': {len(self.devices)}, axis_types=(Auto,))"


EMPTY_MESH = Mesh((), None)


class _Unconstrained:
    """The spec entry that leaves one array axis to the partitioner."""

    def __repr__(self) -> str:
        return "UNCONSTRAINED"


class PartitionSpec(tuple):
    """Per array axis: the mesh axis it is split over, None (replicated) or UNCONSTRAINED."""

    UNCONSTRAINED = _Unconstrained()

    def __new__(cls, *partitions: Any) -> "PartitionSpec":
        return super().__new__(cls, partitions)

    def __repr__(self) -> str:
        return "P" + tuple.__repr__(self)


class NamedSharding:
    """Array axes split over mesh axes as `spec` says (default: the leading axis over the mesh's
    axis, slice i on mesh device i, as pmap places its results)."""

    def __init__(self, mesh: Mesh, spec: PartitionSpec | None = None):
        self.mesh = mesh
        self.spec = PartitionSpec(*mesh.axis_names[:1]) if spec is None else spec

    @property
    def device_set(self) -> set[Device]:
        return set(self.mesh.devices.tolist())

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, NamedSharding) and other.spec == self.spec
                and other.mesh.axis_names == self.mesh.axis_names
                and other.mesh.devices.tolist() == self.mesh.devices.tolist())

    def __hash__(self) -> int:
        return hash((self.mesh.axis_names, tuple(self.spec), len(self.mesh.devices)))

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r}, memory_kind=device)"


class Shard:
    """One device's slice of a pmapped result."""

    def __init__(self, device: Device, index: tuple, data: Any, replica_id: int = 0):
        self.device, self.index, self.data, self.replica_id = device, index, data, replica_id

    def __repr__(self) -> str:
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data})")


class ShardedArray(ArrayImpl):
    """An Array whose leading axis is spread over devices (one slice each)."""

    __slots__ = ("_sharding",)

    def __init__(self, buf: np.ndarray, weak: bool, sharding: NamedSharding):
        super().__init__(buf, weak)
        self._sharding = sharding

    def devices(self) -> set:
        return self._sharding.device_set

    @property
    def sharding(self) -> NamedSharding:
        return self._sharding

    @property
    def addressable_shards(self) -> list[Shard]:
        return [Shard(d, (slice(i, i + 1),), ArrayImpl(self._buf[i:i + 1], self._weak))
                for i, d in enumerate(self._sharding.mesh.devices.tolist())]


def pmap(fun: Callable, axis_name: Any = None, *, in_axes: Any = 0, out_axes: Any = 0,
         static_broadcasted_argnums: int | Sequence[int] = (), devices: Any = None,
         backend: Any = None, axis_size: int | None = None, donate_argnums: Any = ()
         ) -> Callable:
    """Map `fun` over the leading axis of its arguments, one slice per local device."""
    static = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) \
        else tuple(static_broadcasted_argnums)
    name = PMAP_AXIS if axis_name is None else axis_name

    @functools.wraps(fun)
    def pmapped(*args: Any, **kwargs: Any) -> Any:
        available = list(devices) if devices is not None else local_devices()
        dyn_axes = in_axes
        if static and isinstance(in_axes, (tuple, list)):
            dyn_axes = tuple(a for i, a in enumerate(in_axes) if i not in static)
        dyn = [a for i, a in enumerate(args) if i not in static]
        # Python scalars have no axis to map (as in JAX, which looks for a `.shape`)
        sizes = {x.shape[a if isinstance(a, int) else 0]
                 for x, a in zip(tree_flatten(dyn)[0], _leaf_axes(dyn_axes, dyn))
                 if a is not None and hasattr(x, "shape")}
        if not sizes and axis_size is None:
            raise ValueError("pmap requires at least one argument with a mapped axis.")
        size = sizes.pop() if len(sizes) == 1 else axis_size
        if size is not None and size > len(available):
            raise ValueError(f"pmap got a mapped axis of size {size}, but only "
                             f"{len(available)} local devices are available; set "
                             "PYJAX_NUM_CPU_DEVICES (or XLA_FLAGS=--xla_force_host_platform_"
                             "device_count) to use more")

        def body(*dyn_args: Any) -> Any:
            mark_device_axis(trace_state.trace)  # the vmap trace standing for the devices
            it = iter(dyn_args)
            full = [a if i in static else next(it) for i, a in enumerate(args)]
            return fun(*full, **kwargs)

        if kwargs:  # keyword arguments are closed over: no reuse across calls
            compiled = jit(vmap(body, in_axes=dyn_axes, out_axes=out_axes, axis_name=name))
        else:
            compiled = _compiled(body, dyn_axes, out_axes, name,
                                 static_key=(fun, tuple((i, args[i]) for i in static)))
        out = compiled(*dyn)
        mesh = Mesh(available[:size] if size else available[:1], str(name))
        return tree_map(lambda x: ShardedArray(x._buf, x._weak, NamedSharding(mesh))
                        if type(x) is ArrayImpl else x, out)

    return pmapped


def _leaf_axes(in_axes: Any, args: list) -> list:
    from pyjax._src.transforms.batching import _broadcast_prefix
    axes = in_axes if not isinstance(in_axes, list) else tuple(in_axes)
    return _broadcast_prefix(axes, tuple(args), "in_axes")


_cache_slots: dict = {}
_cache_lock = threading.Lock()
caches.register(_cache_slots.clear)


def _compiled(body: Callable, in_axes: Any, out_axes: Any, name: Any, static_key: Any
              ) -> Callable:
    """jit(vmap(body)) for this function and static arguments, built once."""
    key = (static_key, _freeze(in_axes), _freeze(out_axes), name)
    compiled = _cache_slots.get(key)
    if compiled is None:
        compiled = jit(vmap(body, in_axes=in_axes, out_axes=out_axes, axis_name=name))
        with _cache_lock:  # other threads may be evicting too
            if len(_cache_slots) > 256:
                _cache_slots.pop(next(iter(_cache_slots)), None)
            _cache_slots[key] = compiled
    return compiled


def _freeze(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return tuple(_freeze(v) for v in x)
    if isinstance(x, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in x.items()))
    return x
