"""pmap: run a function on each local device's slice of the leading axis.

The host devices share one memory, so pmap is compiled once as jit of vmap over the stacked
device axis; collectives over `axis_name` work as under vmap.  In a distributed job each
process maps over its local devices and the collectives go on across processes over MPI.  Results record which device
holds which slice: a NamedSharding over a one-axis mesh named after `axis_name`, as in JAX.
"""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable, Sequence


from pyjax._src import caches
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.trace import trace_state
from pyjax._src.parallel.collectives import mark_device_axis
from pyjax._src.parallel import distributed
from pyjax._src.parallel.devices import local_devices, process_count
from pyjax._src.parallel.mesh import Mesh
from pyjax._src.parallel.sharding import NamedSharding, PartitionSpec, placed
from pyjax._src.transforms.batching import vmap
from pyjax._src.transforms.jit import jit
from pyjax._src.tree_util import tree_flatten, tree_map

PMAP_AXIS = "_internal_pmap_axis_name"


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
        if kwargs:  # keyword arguments are mapped over their leading axis, as in JAX
            if not isinstance(dyn_axes, (tuple, list)):
                dyn_axes = (dyn_axes,) * len(dyn)
            dyn_axes = (*dyn_axes, 0)
            dyn.append(kwargs)
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

        spans = devices is None and process_count() > 1

        def body(*dyn_args: Any) -> Any:
            # the vmap trace stands for the devices (this process's, in a distributed job)
            mark_device_axis(trace_state.trace, spans_processes=spans)
            kw = dyn_args[-1] if kwargs else {}
            it = iter(dyn_args)
            full = [a if i in static else next(it) for i, a in enumerate(args)]
            return fun(*full, **kw)

        compiled = _compiled(body, dyn_axes, out_axes, name,
                             static_key=(fun, len(args), bool(kwargs), spans,
                                         tuple((i, args[i]) for i in static)))
        try:
            out = compiled(*dyn)
        except Exception as e:  # the other processes would wait for this one's collectives
            if spans:
                distributed.notify_failure(e)
            raise
        mesh = Mesh(available[:size] if size else available[:1], (name,))
        sharding = NamedSharding(mesh, PartitionSpec(name))
        return tree_map(lambda x: placed(x, sharding) if type(x) is ArrayImpl else x, out)

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
