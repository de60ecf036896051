"""shard_map called outside any transformation runs its body eagerly, as JAX's does: each
value is held by a tracer stacking every device's block on leading axes (one per manual mesh
axis), each primitive runs at once on all blocks (vmapped over those axes, so collectives
see their mesh axes), and printing a value shows each device's block.  The varying manual
axes of every value are tracked for `check_vma` (vma.py's rules)."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.trace import Trace, Tracer, use_trace
from pyjax._src.parallel import collectives as coll
from pyjax._src.parallel.vma import eqn_vma, typing
from pyjax._src.transforms.batching import vmap
from pyjax._src.transforms.staging import abstractify


class ShardMapTrace(Trace):
    """The eager body's trace: `mesh`, its manual axes in mesh order and their sizes."""

    def __init__(self, mesh: Any, order: tuple, sizes: dict, check: bool):
        self.mesh = mesh
        self.order = order
        self.sizes = sizes
        self.check = check

    @property
    def types_vma(self) -> bool:
        """Whether values are typed by the axes they vary over (check_vma, as in JAX)."""
        return self.check

    def per_device(self, fun: Callable, in_axes: tuple) -> Callable:
        """`fun` run on every device's blocks: nested vmaps named by the manual axes."""
        order = self.order

        def on_device(*xs: Any) -> Any:
            for name in order:  # the vmaps stand for devices (partial ppermutes give zeros)
                coll.mark_device_axis(coll._axis_trace(name))
            return fun(*xs)

        mapped = on_device
        for name in reversed(order):
            mapped = vmap(mapped, in_axes=in_axes, out_axes=0, axis_name=name,
                          axis_size=self.sizes[name])
        return mapped

    def process_primitive(self, primitive: Any, args: tuple, params: dict) -> Any:
        ours = [isinstance(a, ShardMapTracer) and a._trace is self for a in args]
        vals = [a.val if mine else a for a, mine in zip(args, ours)]
        vmas = [a.vma if mine else frozenset() for a, mine in zip(args, ours)]
        in_axes = tuple(0 if mine else None for mine in ours)
        with use_trace(None):
            outs = self.per_device(lambda *xs: primitive.bind(*xs, **params), in_axes)(*vals)
        many = primitive.multiple_results
        outs = list(outs) if many else [outs]
        in_aval = args[0].aval if args and ours[0] else (abstractify(args[0]) if args else None)
        out_vmas = eqn_vma(primitive, params, vmas, len(outs), in_aval, check=self.check,
                           order=self.order)
        tracers = [ShardMapTracer(self, o, v) for o, v in zip(outs, out_vmas)]
        return tracers if many else tracers[0]

    def stacked(self, x: Any) -> tuple[Any, frozenset]:
        """A body output as (blocks stacked over every manual axis, its vma)."""
        if isinstance(x, ShardMapTracer) and x._trace is self:
            return x.val, x.vma
        with use_trace(None):
            return self.per_device(lambda: x, ())(), frozenset()


class ShardMapTracer(Tracer):
    """One value of an eager shard_map body: `val` stacks every device's block."""

    __slots__ = ("val", "vma")
    tracer_name = "ShardMapTracer"

    def __init__(self, trace: ShardMapTrace, val: Any, vma: frozenset):
        self._trace = trace
        self.val = val
        self.vma = vma if trace.check else frozenset(trace.order)

    @property
    def aval(self) -> ShapedArray:
        full = abstractify(self.val)
        trace = self._trace
        vma = tuple(n for n in trace.order if n in self.vma) if trace.check else ()
        return ShapedArray(full.shape[len(trace.order):], full.dtype, full.weak_type, vma)

    def concrete_value(self) -> Any:
        """A value invariant over every manual axis is the same block everywhere."""
        if self.vma:
            return None
        return np.asarray(self.val)[(0,) * len(self._trace.order)]

    def __str__(self) -> str:
        trace = self._trace
        mesh = trace.mesh
        blocks = np.asarray(self.val)
        names = f"({', '.join(map(str, mesh.axis_names))},)"
        where = [mesh.axis_names.index(a) for a in trace.order]
        return "\n".join(
            f"On {device} at mesh coordinates {names} = {idx}:\n"
            f"{blocks[tuple(idx[k] for k in where)]}\n"
            for idx, device in np.ndenumerate(mesh.devices))

    __repr__ = __str__  # for debuggers, as JAX's


def run_eager(f: Callable, mesh: Any, order: tuple, sizes: dict, check: bool,
              blocks: Sequence[Any], in_vmas: Sequence[frozenset]) -> tuple[list, list]:
    """Call the flat body `f` on blocks stacked over every manual axis: its outputs stacked
    the same way, and their vmas."""
    trace = ShardMapTrace(mesh, order, sizes, check)
    args = [ShardMapTracer(trace, b, v) for b, v in zip(blocks, in_vmas)]
    typed = typing(order) if check else contextlib.nullcontext()  # (jits traced inside)
    try:
        with coll.manual_axes(sizes), use_trace(trace), typed:
            outs = f(*args)
        pairs = [trace.stacked(o) for o in outs]
    finally:
        trace.finish()
    return [p[0] for p in pairs], [p[1] for p in pairs]


def as_array(x: Any) -> Any:
    """An argument as an Array (numpy values and Python scalars converted)."""
    if isinstance(x, (ArrayImpl, Tracer)):
        return x
    from pyjax._src.numpy.lax_numpy import asarray
    return asarray(x)
