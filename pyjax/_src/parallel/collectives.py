"""Collectives over named axes (psum, pmean, pmax, pmin, all_gather, ppermute, axis_index,
psum_scatter, all_to_all, pbroadcast, psend, precv, ragged_all_to_all, and the functions built on
them: axis_size, pshuffle, pswapaxes, pcast) and `with_sharding_constraint`.

Each is a primitive whose `batch_collective` rule acts on the batch axis of the vmap/pmap trace
carrying that name; under a trace with another name it passes through, applied elementwise
along that trace's axis.  Outside any trace bearing the name it is an error, as in JAX.
pmap marks its trace as a device axis (`mark_device_axis`): JAX 0.10.2 runs pmap as a
shard_map, so a few collectives act differently there than under vmap.
"""
from __future__ import annotations

import contextlib
import threading
import weakref
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.trace import Tracer, trace_state
from pyjax._src.parallel.propagation import Given
from pyjax._src.parallel.vma import reduces_over, varies_over
from pyjax._src.primitives import elementwise as ew
from pyjax._src.primitives import indexing as idx
from pyjax._src.primitives import reductions as red
from pyjax._src.primitives import shape as shp
from pyjax._src.transforms import ad
from pyjax._src.transforms.batching import BatchTrace, bdim_at_front, broadcast_batch, move_axis


def _names(axis_name: Any) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _unbound(*args: Any, axis_name: Any, **_: Any) -> Any:
    raise NameError(f"unbound axis name: {_names(axis_name)[0]}")


#: the vmap traces that pmap runs its function under: their members are devices
_device_axes: "weakref.WeakSet[BatchTrace]" = weakref.WeakSet()


#: device axes whose members are the local devices of every process of a distributed job
_process_axes: "weakref.WeakSet[BatchTrace]" = weakref.WeakSet()


def mark_device_axis(trace: Any, spans_processes: bool = False) -> None:
    """Record that `trace` (pmap's vmap trace) maps over devices; with `spans_processes`, its
    members are this process's devices and the axis goes on over the other processes."""
    _device_axes.add(trace)
    if spans_processes:
        _process_axes.add(trace)


def _is_device_axis(trace: BatchTrace) -> bool:
    return trace in _device_axes


def _spans(trace: BatchTrace) -> bool:
    return trace in _process_axes


def _global_size(trace: BatchTrace) -> int:
    """The axis size counting every process's members."""
    if trace in _process_axes:
        from pyjax._src.parallel.devices import process_count
        return trace.axis_size * process_count()
    return trace.axis_size


def _collective_name(trace: BatchTrace, what: str) -> str:
    return f"{what}[axis_name={trace.axis_name}]"


def _axis_trace(name: Any) -> BatchTrace | None:
    """The vmap/pmap trace bearing `name`, seen from the current trace through its parents
    (None when no such trace is visible, e.g. from a jit traced inside the vmap)."""
    trace = trace_state.trace
    while trace is not None:
        if isinstance(trace, BatchTrace) and trace.axis_name == name:
            return trace
        trace = getattr(trace, "parent", None)
    return None


class _ManualAxes(threading.local):
    """Sizes of the mesh axes a shard_map body is being traced over (its collectives are
    staged, their shapes known from these sizes)."""

    def __init__(self) -> None:
        self.sizes: dict = {}


_manual_axes = _ManualAxes()


@contextlib.contextmanager
def manual_axes(sizes: dict) -> Iterator[None]:
    """Within: collectives over these axis names are staged with the given sizes."""
    previous = _manual_axes.sizes
    _manual_axes.sizes = {**previous, **sizes}
    try:
        yield
    finally:
        _manual_axes.sizes = previous


def manual_axis_sizes() -> dict:
    """Sizes of the manual axes of the shard_map body being traced or run (by name)."""
    return _manual_axes.sizes


def _env_size(axis_name: Any) -> int | None:
    """The product of the named axes' sizes when all are shard_map axes being traced."""
    size = 1
    for name in _names(axis_name):
        if name not in _manual_axes.sizes:
            return None
        size *= _manual_axes.sizes[name]
    return size


def _static_axis_size(axis_name: Any) -> int | None:
    """The product of the named axes' sizes when all are visible; None when one is not but a
    trace is running (its collective is then staged); JAX's NameError when evaluating eagerly."""
    size = 1
    for name in _names(axis_name):
        trace = _axis_trace(name)
        if trace is None and name in _manual_axes.sizes:
            size *= _manual_axes.sizes[name]
            continue
        if trace is None:
            if trace_state.trace is None:
                raise NameError(f"unbound axis name: {name}")
            return None
        size *= _global_size(trace)
    return size


def _collective(name: str, on_axis: Callable[..., tuple], abstract_eval: Callable,
                multiple_results: bool = False, passthrough: Callable | None = None,
                names_param: str = "axis_name") -> Primitive:
    """A primitive that, under the BatchTrace named by its `names_param` parameter, runs
    `on_axis(trace, vals, dims, **params)`; elsewhere it passes through keeping the batch
    axes (or runs `passthrough(trace, vals, dims, **params)` when the batch axis needs other
    handling)."""
    prim = Primitive(name, multiple_results=multiple_results)
    prim.impl = _unbound
    prim.abstract_eval = abstract_eval

    def batch_collective(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any],
                         **params: Any) -> tuple:
        if trace.axis_name is not None and trace.axis_name in _names(params[names_param]):
            return on_axis(trace, vals, dims, **params)
        if all(d is None for d in dims):
            out = prim.bind(*vals, **params)
            return out, ([None] * len(out) if multiple_results else None)
        if passthrough is not None:
            return passthrough(trace, vals, dims, **params)
        vals = [bdim_at_front(v, d, trace.axis_size) for v, d in zip(vals, dims)]
        out = prim.bind(*vals, **{k: v + 1 if k in _OPERAND_AXIS_PARAMS else v
                                  for k, v in params.items()})  # past the batch axis
        return out, ([0] * len(out) if multiple_results else 0)

    prim.batch_collective = batch_collective
    return prim


#: parameters naming an axis of the operand, shifted when a batch axis is put in front
_OPERAND_AXIS_PARAMS = ("axis", "scatter_dimension")


def _same_aval(x: ShapedArray, **_: Any) -> ShapedArray:
    return x


def _other_names(trace: BatchTrace, axis_name: Any) -> tuple:
    """The names of a multi-axis collective left once `trace`'s own axis is done."""
    return tuple(n for n in _names(axis_name) if n != trace.axis_name)


def _reducer(reduce: Callable, of_constant: Callable, names_param: str = "axis_name"
             ) -> Callable:
    """Reduce along the batch axis; a value the same on every member of the axis reduces in
    closed form (`of_constant(x, axis_size)`), as JAX's _constant_reduction does.  The other
    axes of a multi-axis reduction (parameter `names_param`) are reduced by the traces
    bearing them."""
    def on_axis(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any],
                **params: Any) -> tuple:
        (x,), (d,) = vals, dims
        out = of_constant(x, trace.axis_size) if d is None else reduce(x, [d])
        if _spans(trace):  # then over the other processes
            from pyjax._src.parallel import distributed
            op = on_axis.prim.name[1:].split("_")[0]  # (psum_invariant: a sum)
            out = distributed.allreduce(out, op, _collective_name(trace, on_axis.prim.name))
        rest = _other_names(trace, params[names_param])
        if rest:
            out = on_axis.prim.bind(out, **{names_param: rest})
        return out, None
    return on_axis


_psum_on_axis = _reducer(red.reduce_sum, lambda x, size: ew.mul(ew._const(x, size), x))
psum_p = _collective("psum", _psum_on_axis, _same_aval)
_pmax_on_axis = _reducer(red.reduce_max, lambda x, size: x)
_pmin_on_axis = _reducer(red.reduce_min, lambda x, size: x)
pmax_p = _collective("pmax", _pmax_on_axis, _same_aval)
pmin_p = _collective("pmin", _pmin_on_axis, _same_aval)
_psum_on_axis.prim, _pmax_on_axis.prim, _pmin_on_axis.prim = psum_p, pmax_p, pmin_p
ad.deflinear(psum_p, lambda ct, x, *, axis_name: [psum_p.bind(ct, axis_name=axis_name)])
ad.defjvp(pmax_p, None)
ad.defjvp(pmin_p, None)
#: psum where values are typed by the axes they vary over (shard_map with check_vma): the sum
#: over `axes` is invariant along them; its transpose is pvary (JAX's psum_invariant)
_psum_invariant_on_axis = _reducer(red.reduce_sum, lambda x, size: ew.mul(ew._const(x, size), x),
                                   names_param="axes")
psum_invariant_p = _collective("psum_invariant", _psum_invariant_on_axis, _same_aval,
                               names_param="axes")
_psum_invariant_on_axis.prim = psum_invariant_p


def _pvary_on_axis(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any],
                   **params: Any) -> tuple:
    """A value invariant over the axis is already every member's: the cast moves nothing."""
    (x,), (d,) = vals, dims
    rest = _other_names(trace, params["axes"])
    return (pvary_p.bind(x, axes=rest) if rest else x), d


#: the no-op cast of a value invariant over manual axes to one varying over them (shard_map
#: with check_vma types values by the axes they vary over; vma.py adds the axes)
pvary_p = _collective("pvary", _pvary_on_axis, _same_aval, names_param="axes")
ad.deflinear(pvary_p, lambda ct, x, *, axes: [psum_invariant_p.bind(ct, axes=axes)])
ad.deflinear(psum_invariant_p, lambda ct, x, *, axes: [pvary_p.bind(ct, axes=axes)])
# how each collective's result varies over a shard_map body's manual axes (check_vma)
psum_p.vma = reduces_over("axis_name", "psum")
pmax_p.vma = reduces_over("axis_name", "pmax")
pmin_p.vma = reduces_over("axis_name", "pmin")
psum_invariant_p.vma = reduces_over("axes", "psum")
pvary_p.vma = varies_over("axes")


def _axis_index_on_axis(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any],
                        *, axis_name: Any) -> tuple:
    """The member's position; over several axes, its row-major position across them (the
    axes before this one are resolved by their own traces)."""
    names = _names(axis_name)
    at = names.index(trace.axis_name)
    before, after = names[:at], names[at + 1:]
    index = shp.iota(np.int32, trace.axis_size)
    if _spans(trace):  # members of process p come after those of the processes before it
        from pyjax._src.parallel.devices import process_index
        index = ew.add(index, np.int32(process_index() * trace.axis_size))
    if after:
        size_after = _static_axis_size(after)
        index = ew.add(ew.mul(index, np.int32(size_after)),
                       axis_index_p.bind(axis_name=after))
    if before:
        outer = axis_index_p.bind(axis_name=before)
        index = ew.add(ew.mul(outer, np.int32(trace.axis_size * (_static_axis_size(after)
                                                                  if after else 1))), index)
    return index, 0


axis_index_p = _collective("axis_index", _axis_index_on_axis,
                           lambda *, axis_name: ShapedArray((), np.dtype(np.int32)))
ad.defjvp_zero(axis_index_p)
axis_index_p.vma = varies_over("axis_name")


def _all_gather_on_axis(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any], *,
                        axis_name: Any, axis: int, tiled: bool) -> tuple:
    (x,), (d,) = vals, dims
    x = bdim_at_front(x, d, trace.axis_size)
    names = _names(axis_name)
    if len(names) > 1:  # gather the other axes too, then order members row-major
        at = names.index(trace.axis_name)
        before, after = names[:at], names[at + 1:]
        rest = all_gather_p.bind(x, axis_name=before + after, axis=0, tiled=False)
        n_before = _static_axis_size(before) if before else 1
        n_after = _static_axis_size(after) if after else 1
        member = list(np.shape(x)[1:])
        rest = shp.reshape(rest, [n_before, n_after, trace.axis_size] + member)
        rest = shp.transpose(rest, (0, 2, 1) + tuple(range(3, 3 + len(member))))
        x = shp.reshape(rest, [n_before * trace.axis_size * n_after] + member)
    elif _spans(trace):
        from pyjax._src.parallel import distributed
        x = distributed.allgather(x, _collective_name(trace, "all_gather"))
    gathered = move_axis(x, 0, axis)
    if tiled:
        shape = list(np.shape(gathered))
        shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
        gathered = shp.reshape(gathered, shape)
    return gathered, None


def _all_gather_abstract(x: ShapedArray, *, axis_name: Any, axis: int, tiled: bool
                         ) -> ShapedArray:
    size = _env_size(axis_name)
    if size is not None:  # staged inside shard_map
        shape = list(x.shape)
        if tiled:
            shape[axis] *= size
        else:
            shape.insert(axis, size)
        return ShapedArray(tuple(shape), x.dtype, x.weak_type)
    raise NameError(f"unbound axis name: {_names(axis_name)[0]}")


all_gather_p = _collective("all_gather", _all_gather_on_axis, _all_gather_abstract)


def _permute_members(trace: BatchTrace, x: Any, d: int | None, perm: tuple) -> tuple:
    """Member dst receives member src's x for each (src, dst).  A full permutation is a take
    along the batch axis (JAX's batcher); a partial one leaves zeros where nothing arrives,
    which JAX computes on devices (pmap) but refuses under vmap."""
    n = trace.axis_size
    if len(perm) != n and not _is_device_axis(trace):
        raise AssertionError("Permutation doesn't match the axis size!")
    if len(perm) == n:
        if d is None:
            return x, None
        source = np.zeros(n, dtype=int)
        for src, dst in perm:
            source[dst] = src
        if _is_device_axis(trace):  # one take into a new buffer, not the gather vmap stages
            order = [int(s) for s in source]
            return (x if order == list(range(n)) else shp.reorder(x, d, order)), d
        from pyjax._src.numpy.indexing import take
        return take(x, source, d), d
    x = bdim_at_front(x, d, n)
    source_of = {dst: src for src, dst in perm}
    rows = []
    zero = None
    for dst in range(n):
        if dst in source_of:
            rows.append(shp.squeeze(shp.slice(x, (source_of[dst],) + (0,) * (np.ndim(x) - 1),
                                               (source_of[dst] + 1,) + np.shape(x)[1:]), [0]))
        else:
            zero = zero if zero is not None else ad.zeros_like_aval(
                ShapedArray(np.shape(x)[1:], np.dtype(x.dtype)))
            rows.append(zero)
    return shp.stack_p.bind(*rows, axis=0), 0


def _ppermute_on_axis(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any], *,
                      axis_name: Any, perm: tuple) -> tuple:
    (x,), (d,) = vals, dims
    if _spans(trace):
        from pyjax._src.parallel import distributed
        x = bdim_at_front(x, d, trace.axis_size)
        return distributed.permute(x, perm, trace.axis_size,
                                   _collective_name(trace, "ppermute")), 0
    return _permute_members(trace, x, d, perm)


ppermute_p = _collective("ppermute", _ppermute_on_axis, _same_aval)
ad.deflinear(ppermute_p, lambda ct, x, *, axis_name, perm: [
    ppermute_p.bind(ct, axis_name=axis_name, perm=tuple((d, s) for s, d in perm))])


def _psum_scatter_on_axis(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any], *,
                          axis_name: Any, scatter_dimension: int, tiled: bool) -> tuple:
    summed, _ = _psum_on_axis(trace, vals, dims, axis_name=trace.axis_name)
    n = _global_size(trace)
    shape = list(np.shape(summed))
    if tiled:
        shape[scatter_dimension:scatter_dimension + 1] = [n, shape[scatter_dimension] // n]
        summed = shp.reshape(summed, shape)
    if _spans(trace):  # this process keeps its members' slices
        from pyjax._src.parallel.devices import process_index
        first = process_index() * trace.axis_size
        summed = idx.slice_in_dim(summed, first, first + trace.axis_size,
                                  axis=scatter_dimension)
    return move_axis(summed, scatter_dimension, 0), 0


def _psum_scatter_abstract(x: ShapedArray, *, axis_name: Any, scatter_dimension: int,
                           tiled: bool) -> ShapedArray:
    size = _env_size(axis_name)
    if size is None:
        return x
    shape = list(x.shape)
    if tiled:
        if shape[scatter_dimension] % size:
            raise ValueError(f"tiled reduce_scatter operand scatter dimension size "
                             f"{shape[scatter_dimension]} must be divisible by shard_count "
                             f"{size}")
        shape[scatter_dimension] //= size
    else:
        if shape[scatter_dimension] != size:
            raise ValueError(f"reduce_scatter operand scatter dimension size "
                             f"{shape[scatter_dimension]} must match shard count {size}")
        del shape[scatter_dimension]
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


psum_scatter_p = _collective("psum_scatter", _psum_scatter_on_axis, _psum_scatter_abstract)


def _split_axis(x: Any, axis: int, factor: int) -> Any:
    shape = list(np.shape(x))
    shape[axis:axis + 1] = [factor, shape[axis] // factor]
    return shp.reshape(x, shape)


def _fold_axis(x: Any, axis: int) -> Any:
    shape = list(np.shape(x))
    shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
    return shp.reshape(x, shape)


def _all_to_all_on_axis(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any], *,
                        axis_name: Any, split_axis: int, concat_axis: int, tiled: bool) -> tuple:
    """The primitive splits `split_axis` into one chunk per member and stacks what arrives
    along `concat_axis` (the wrapper adds and removes unit axes for the untiled form)."""
    (x,), (d,) = vals, dims
    n = trace.axis_size
    if d is None:
        x, d = broadcast_batch(x, n, 0), 0
    if _spans(trace):
        return _all_to_all_processes(trace, bdim_at_front(x, d, n), split_axis,
                                     concat_axis), 0
    if split_axis == concat_axis:
        axis = split_axis + (d <= split_axis)
        x = _split_axis(x, axis, n)
        moved = d + (axis <= d)
        perm = list(range(np.ndim(x)))
        perm[moved], perm[axis] = perm[axis], perm[moved]
        return _fold_axis(shp.transpose(x, tuple(perm)), axis), d
    x = _fold_axis(move_axis(x, d, concat_axis), concat_axis)
    return _split_axis(x, split_axis, n), split_axis


def _all_to_all_abstract(x: ShapedArray, *, axis_name: Any, split_axis: int, concat_axis: int,
                         tiled: bool) -> ShapedArray:
    size = _static_axis_size(axis_name)
    if size is None and not tiled:  # untiled, the split axis has the axis size
        size = x.shape[split_axis]
    if size is None:  # staged where the axis is not visible: sized when it is batched
        return ShapedArray(x.shape, x.dtype, False)
    shape = list(x.shape)
    shape[split_axis] //= size
    shape[concat_axis] *= size
    return ShapedArray(tuple(shape), x.dtype, False)


def _all_to_all_processes(trace: BatchTrace, x: Any, split_axis: int, concat_axis: int
                          ) -> Any:
    """all_to_all over members on every process: x is (local members, ...member's value);
    chunk j of a member's split axis goes to global member j, and what arrives is stacked,
    in sender order, as the major part of the concat axis."""
    from pyjax._src.parallel import distributed
    from pyjax._src.parallel.devices import process_count
    local, procs = trace.axis_size, process_count()
    n = local * procs
    x = _split_axis(x, 1 + split_axis, n)                  # (L, ..., N, c, ...)
    x = move_axis(x, 1 + split_axis, 1)                     # (L_src, N, ...rest)
    rest = list(np.shape(x)[2:])
    x = shp.reshape(x, [local, procs, local] + rest)        # (L_src, P_dst, L_dst, ...)
    x = shp.transpose(x, (1, 2, 0) + tuple(range(3, 3 + len(rest))))
    x = distributed.alltoall(x, _collective_name(trace, "all_to_all"))  # (P_src, L_dst, L_src)
    x = shp.transpose(x, (1, 0, 2) + tuple(range(3, 3 + len(rest))))
    x = shp.reshape(x, [local, n] + rest)                   # (L_dst, N_src, ...rest)
    x = move_axis(x, 1, 1 + concat_axis)
    return _fold_axis(x, 1 + concat_axis)


def _all_to_all_passthrough(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any], *,
                            axis_name: Any, split_axis: int, concat_axis: int,
                            tiled: bool) -> tuple:
    """Batched along another (inner) axis: that axis leads and the collective's axes shift
    past it, so the collective still splits and concatenates the member's own axes."""
    (x,), (d,) = vals, dims
    x = bdim_at_front(x, d, trace.axis_size)
    return all_to_all_p.bind(x, axis_name=axis_name, split_axis=split_axis + 1,
                             concat_axis=concat_axis + 1, tiled=tiled), 0


all_to_all_p = _collective("all_to_all", _all_to_all_on_axis, _all_to_all_abstract,
                           passthrough=_all_to_all_passthrough)


def _pbroadcast_on_axis(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any], *,
                        axis_name: Any, source: int) -> tuple:
    (x,), (d,) = vals, dims
    if len(_names(axis_name)) > 1:
        raise NotImplementedError("pbroadcast batcher only supports a single axis")
    if not 0 <= source < trace.axis_size:
        raise AssertionError("collective broadcast doesn't fit in the axis size!")
    if d is None:
        return x, None
    row = shp.squeeze(idx.slice_in_dim(x, source, source + 1, axis=d), [d])
    return broadcast_batch(row, trace.axis_size, d), d


def _no_eval_rule(name: str) -> Callable:
    def impl(*args: Any, **params: Any) -> Any:
        raise NotImplementedError(f"Evaluation rule for '{name}' not implemented")
    return impl


pbroadcast_p = _collective("pbroadcast", _pbroadcast_on_axis, _same_aval)
pbroadcast_p.impl = _no_eval_rule("pbroadcast")


def _pbroadcast_transpose(ct: Any, x: Any, *, axis_name: Any, source: int) -> list:
    """Every member's cotangent flows back to the source member."""
    is_source = ew.eq(axis_index_p.bind(axis_name=axis_name), np.int32(source))
    total = psum_p.bind(ct, axis_name=axis_name)
    zeros = ad.zeros_like_aval(ShapedArray(np.shape(ct), np.dtype(ct.dtype)))
    return [ew.select(is_source, total, zeros)]


ad.deflinear(pbroadcast_p, _pbroadcast_transpose)


def _psend_on_axis(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any], *,
                   axis_name: tuple, perm: tuple) -> tuple:
    """Under vmap JAX batches psend as ppermute (its value, not a token); on devices it has a
    GPU lowering only."""
    if _is_device_axis(trace):
        raise NotImplementedError("psend is currently only implemented on GPU")
    (x,), (d,) = vals, dims
    if _spans(trace):
        from pyjax._src.parallel import distributed
        x = bdim_at_front(x, d, trace.axis_size)
        return distributed.permute(x, perm, trace.axis_size,
                                   _collective_name(trace, "ppermute")), 0
    return _permute_members(trace, x, d, perm)


def _psend_unbound(x: Any, *, axis_name: tuple, perm: tuple) -> Any:
    raise NameError(f"Found an unbound axis name: {axis_name[0]}. To fix this, please call "
                    "psend under `jax.shard_map`.")


psend_p = _collective("psend", _psend_on_axis, _same_aval)
psend_p.impl = _psend_unbound


def _precv_abstract(token: Any, *, out_shape: ShapedArray, axis_name: tuple, perm: tuple
                    ) -> ShapedArray:
    return out_shape


def _precv_on_axis(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any], *,
                   out_shape: ShapedArray, axis_name: tuple, perm: tuple) -> tuple:
    """On devices precv has a GPU lowering only; under vmap JAX hands it to ppermute's batching
    rule, which takes no `out_shape` (a TypeError, kept)."""
    if _is_device_axis(trace):
        raise NotImplementedError("precv is currently only implemented on GPU")
    raise TypeError("_ppermute_batcher() got an unexpected keyword argument 'out_shape'")


def _precv_eager(token: Any, **params: Any) -> Any:
    raise NotImplementedError("Evaluation rule for 'precv' not implemented")


precv_p = _collective("precv", _precv_on_axis, _precv_abstract)
precv_p.impl = _precv_eager


# ragged_all_to_all ---------------------------------------------------------------------------

def _ragged_abstract(operand: ShapedArray, output: ShapedArray, input_offsets: ShapedArray,
                     send_sizes: ShapedArray, output_offsets: ShapedArray,
                     recv_sizes: ShapedArray, *, axis_name: tuple, axis_index_groups: Any
                     ) -> ShapedArray:
    for what, aval in (("input_offsets", input_offsets), ("send_sizes", send_sizes),
                       ("output_offsets", output_offsets), ("recv_sizes", recv_sizes)):
        if not np.issubdtype(aval.dtype, np.integer):
            raise ValueError(f"ragged_all_to_all {what} must be integer type.")
    for what, aval in (("input_offsets", input_offsets), ("send_sizes", send_sizes),
                       ("output_offsets", output_offsets), ("recv_sizes", recv_sizes)):
        if len(aval.shape) != 1 or aval.shape[0] < 1:
            raise ValueError(f"ragged_all_to_all {what} must be rank 1 with positive dimension "
                             f"size, but got shape {aval.shape}")
    return ShapedArray(output.shape, output.dtype, False)


def _ragged_unbound(*args: Any, **params: Any) -> Any:
    raise RuntimeError("ragged_all_to_all must be used within a mapped context like vmap or "
                       "shard_map.")


def _exchange_offsets(x: Any, n: int) -> Any:
    """(members, K) offsets as the receivers see them: receiver r's chunk i is sender
    i // (K/n)'s chunk r*(K/n) + i % (K/n) (all_to_all with split and concat axis 0, tiled)."""
    k = np.shape(x)[1]
    x = shp.reshape(x, (n, n, k // n))
    return shp.reshape(shp.transpose(x, (1, 0, 2)), (n, k))


def _unbatched_aval(aval: ShapedArray, dim: int) -> ShapedArray:
    return ShapedArray(aval.shape[:dim] + aval.shape[dim + 1:], aval.dtype, aval.weak_type)


def _ragged_on_axis(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any], *,
                    axis_name: tuple, axis_index_groups: Any) -> tuple:
    """Each receiver's output, with the chunks its senders address to it written in.  Every
    output row p of receiver r takes operand row io + (p - oo) of the sender of the chunk whose
    [oo, oo + recv_size) covers p; other rows keep `output`."""
    if not _is_device_axis(trace) or axis_index_groups:
        raise NotImplementedError("Please open a feature request!")
    from pyjax._src.transforms.staging import abstractify
    member_avals = [abstractify(v) if d is None else _unbatched_aval(abstractify(v), d)
                    for v, d in zip(vals, dims)]
    _ragged_abstract(*member_avals, axis_name=axis_name, axis_index_groups=axis_index_groups)
    n = trace.axis_size
    operand, output, *index_args = [bdim_at_front(v, d, n) for v, d in zip(vals, dims)]
    io, _, oo, rs = [ew.convert_element_type(a, np.int32) for a in index_args]
    k = np.shape(io)[1]
    if k % n:
        raise ValueError(f"ragged_all_to_all needs a number of chunks ({k}) divisible by the "
                         f"size of axis {trace.axis_name!r} ({n})")
    rows_in, rows_out = np.shape(operand)[1], np.shape(output)[1]
    io, oo = _exchange_offsets(io, n), _exchange_offsets(oo, n)
    pos = shp.broadcasted_iota(np.int32, (n, k, rows_out), 2)
    start = shp.broadcast_in_dim(oo, (n, k, rows_out), (0, 1))
    stop = ew.add(start, shp.broadcast_in_dim(rs, (n, k, rows_out), (0, 1)))
    hit = ew.bitwise_and(ew.ge(pos, start), ew.lt(pos, stop))
    sender = np.repeat(np.arange(n, dtype=np.int32), k // n) * np.int32(rows_in)
    source_row = ew.add(ew.sub(pos, start), shp.broadcast_in_dim(
        ew.add(io, sender[None, :]), (n, k, rows_out), (0, 1)))
    chosen = red.reduce_max(ew.select(hit, source_row, np.full((n, k, rows_out), -1, np.int32)),
                            [1])
    rest = tuple(np.shape(operand)[2:])
    flat = shp.reshape(operand, (n * rows_in,) + rest)
    dnums = idx.GatherDimensionNumbers(offset_dims=tuple(range(2, 2 + len(rest))),
                                   collapsed_slice_dims=(0,), start_index_map=(0,))
    taken = idx.gather(flat, shp.expand_dims(chosen, (2,)), dnums, (1,) + rest, mode="clip")
    covered = shp.broadcast_in_dim(ew.ge(chosen, np.int32(0)), np.shape(output), (0, 1))
    return ew.select(covered, taken, output), 0


def _ragged_passthrough(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any], *,
                        axis_name: tuple, axis_index_groups: Any) -> tuple:
    """Another axis's batch becomes more rows and more chunks (JAX's batcher): member b's rows
    shift by b times the row count, its chunks interleave with the other members'."""
    if axis_index_groups:
        raise NotImplementedError("Please open a feature request!")
    size = trace.axis_size
    operand, output = [bdim_at_front(v, d, size) for v, d in zip(vals[:2], dims[:2])]
    rows_in, rows_out = np.shape(operand)[1], np.shape(output)[1]
    index_args = [move_axis(bdim_at_front(v, d, size), 0, 1) for v, d in zip(vals[2:], dims[2:])]
    io, ss, oo, rs = index_args
    io = ew.add(io, (np.arange(size) * rows_in).astype(io.dtype)[None, :])
    oo = ew.add(oo, (np.arange(size) * rows_out).astype(oo.dtype)[None, :])

    def merge(x: Any) -> Any:
        shape = np.shape(x)
        return shp.reshape(x, (shape[0] * shape[1],) + tuple(shape[2:]))

    merged = [merge(x) for x in (operand, output, io, ss, oo, rs)]
    out = ragged_all_to_all_p.bind(*merged, axis_name=axis_name,
                                   axis_index_groups=axis_index_groups)
    return shp.reshape(out, (size, rows_out) + tuple(np.shape(out)[1:])), 0


ragged_all_to_all_p = _collective("ragged_all_to_all", _ragged_on_axis, _ragged_abstract,
                                  passthrough=_ragged_passthrough)
ragged_all_to_all_p.impl = _ragged_unbound


def _ragged_jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
    """Linear in (operand, output) together; the offsets and sizes are indices."""
    out = ragged_all_to_all_p.bind(*primals, **params)
    if type(tangents[0]) is ad.Zero and type(tangents[1]) is ad.Zero:
        return out, ad.Zero.like(out)
    dot = [ad.instantiate(t) for t in tangents[:2]]
    return out, ragged_all_to_all_p.bind(*dot, *primals[2:], **params)


def _ragged_transpose(ct: Any, operand: Any, output: Any, input_offsets: Any, send_sizes: Any,
                      output_offsets: Any, recv_sizes: Any, *, axis_name: tuple,
                      axis_index_groups: Any) -> list:
    """The received chunks go back to their senders; the rows they overwrote get no
    cotangent."""
    landed = all_to_all_p.bind(output_offsets, axis_name=axis_name, split_axis=0,
                               concat_axis=0, tiled=True)
    taken_from = all_to_all_p.bind(input_offsets, axis_name=axis_name, split_axis=0,
                                   concat_axis=0, tiled=True)
    operand_ct = None
    if ad.is_undefined(operand):
        zero = ad.zeros_like_aval(operand.aval)
        operand_ct = ragged_all_to_all_p.bind(ct, zero, landed, recv_sizes, taken_from,
                                              send_sizes, axis_name=axis_name,
                                              axis_index_groups=axis_index_groups)
    output_ct = None
    if ad.is_undefined(output):
        rows, k = np.shape(ct)[0], np.shape(landed)[0]
        pos = shp.broadcasted_iota(np.int32, (k, rows), 1)
        start = shp.broadcast_in_dim(ew.convert_element_type(landed, np.int32), (k, rows), (0,))
        stop = ew.add(start, shp.broadcast_in_dim(ew.convert_element_type(recv_sizes, np.int32),
                                                  (k, rows), (0,)))
        written = red.reduce_or(ew.bitwise_and(ew.ge(pos, start), ew.lt(pos, stop)), [0])
        written = shp.broadcast_in_dim(written, np.shape(ct), (0,))
        output_ct = ew.select(written, ad.zeros_like_aval(
            ShapedArray(np.shape(ct), np.dtype(ct.dtype))), ct)
    return [operand_ct, output_ct, None, None, None, None]


ragged_all_to_all_p.jvp = _ragged_jvp
ragged_all_to_all_p.transpose = _ragged_transpose


# sharding_constraint -------------------------------------------------------------------------

def _constraint_batch(vals: Sequence[Any], dims: Sequence[Any], *, sharding: Any, layout: Any,
                      context_mesh: Any, unconstrained_dims: frozenset) -> tuple:
    """The batch axis is left to the partitioner (JAX's batcher): UNCONSTRAINED in the spec."""
    from pyjax._src.parallel.sharding import NamedSharding, PartitionSpec
    (x,), (d,) = vals, dims
    dims_out = {u + (d <= u) for u in unconstrained_dims} | {d}
    if isinstance(sharding, NamedSharding):
        spec = list(sharding.spec.partitions)
        spec.insert(d, None)
        spec += [None] * (np.ndim(x) - len(spec))
        for u in dims_out:
            spec[u] = PartitionSpec.UNCONSTRAINED
        sharding = NamedSharding(sharding.mesh, PartitionSpec(*spec))
    out = sharding_constraint_p.bind(x, sharding=sharding, layout=layout,
                                     context_mesh=context_mesh,
                                     unconstrained_dims=frozenset(dims_out))
    return out, d


class _SortedSet:
    """Prints a frozenset param as JAX's jaxpr printer does: `frozenset({0, 1})`, sorted."""

    def __init__(self, items: frozenset):
        self.items = items

    def __str__(self) -> str:
        return f"frozenset({{{', '.join(repr(e) for e in sorted(self.items))}}})"


def _constraint_sharding_rule(eqn: Any, ins: list, sizes: dict) -> list:
    """The value is laid out as the constraint says."""
    sharding = eqn.params["sharding"]
    return [Given(getattr(sharding, "spec", sharding), len(eqn.outvars[0].aval.shape))]


def _constraint_pp(eqn: Any, context: Any) -> Any:
    from pyjax._src.core.jaxpr import pp_eqn_standard
    params = dict(eqn.params, unconstrained_dims=_SortedSet(eqn.params["unconstrained_dims"]))
    return pp_eqn_standard(eqn, context, params=params)


sharding_constraint_p = Primitive("sharding_constraint")
sharding_constraint_p.impl = lambda x, **params: x


def _constraint_eager(prim: Primitive, args: tuple, params: dict) -> Any:
    """Eagerly the value comes back laid out as the (concrete) sharding says; a sharding over
    an abstract mesh (a PartitionSpec under `set_mesh`) only applies to NamedSharding inputs."""
    from pyjax._src.backend.dispatch import apply_primitive
    from pyjax._src.parallel.sharding import NamedSharding, placed
    out = apply_primitive(prim, args, params)
    sharding = params["sharding"]
    if not sharding._is_concrete:
        given = getattr(args[0], "sharding", None)
        if not isinstance(given, NamedSharding):
            raise TypeError(
                "The sharding on the input must be a `NamedSharding` since the target sharding "
                "has an `AbstractMesh` in it. Got sharding type "
                f"{type(given)} for shape {out.aval.str_short()}")
        return out
    if params["unconstrained_dims"]:  # partly left to the partitioner: no layout to check
        return out
    sharding.shard_shape(out.shape)  # IndivisibleError when the axes do not divide
    return placed(out, sharding)


sharding_constraint_p.eager = _constraint_eager
sharding_constraint_p.abstract_eval = _same_aval
sharding_constraint_p.batch = _constraint_batch
sharding_constraint_p.pp_rule = _constraint_pp
sharding_constraint_p.sharding_rule = _constraint_sharding_rule
sharding_constraint_p.result_mesh = lambda params: getattr(params["sharding"], "mesh", None)
ad.deflinear(sharding_constraint_p,
             lambda ct, x, **params: [sharding_constraint_p.bind(ct, **params)])


# ---------------------------------------------------------------------------------------------
# lax functions
# ---------------------------------------------------------------------------------------------

def _without_size_one(axis_name: Any) -> Any:
    """The axis names less the mesh axes of size 1 while jax.remove_size_one_mesh_axis_from_type
    is on (a tuple, () when none is left); otherwise, or when none is dropped, as given."""
    from pyjax._src.parallel import size_one
    if not size_one.active():
        return axis_name
    names = _names(axis_name)
    kept = size_one.collective_axes(names)
    return axis_name if kept == names else kept


def _tree_apply(fn: Callable, x: Any) -> Any:
    from pyjax._src.tree_util import tree_map
    return tree_map(fn, x)


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """Sum of x over the members of the named axis.  Booleans are summed as int32; values that
    are not traced are the same on every member, so (as in JAX) their sum is axis size * x,
    computed now."""
    from pyjax._src.tree_util import tree_flatten, tree_unflatten
    axis_name = _without_size_one(axis_name)
    if axis_name == ():
        return x
    leaves, tree = tree_flatten(x)
    leaves = [ew.convert_element_type(v, np.int32) if dtypes.dtype_and_weak(v)[0] == np.bool_
              else v for v in leaves]
    if not any(isinstance(v, Tracer) for v in leaves):
        size = _static_axis_size(axis_name)
        if size is not None:
            return tree_unflatten(tree, [_times(size, v) for v in leaves])
    if any(typing_vma(v) for v in leaves):
        names = _names(axis_name)
        return tree_unflatten(tree, [psum_invariant_p.bind(_varying_over(v, names), axes=names)
                                     for v in leaves])
    return tree_unflatten(tree, [psum_p.bind(v, axis_name=axis_name) for v in leaves])


def _varying_over(x: Any, names: tuple) -> Any:
    """x cast (pvary) to vary over the manual axes of `names` when it varies over none of
    them, as JAX casts psum's invariant operand in a body typed by check_vma (unless
    jax.auto_pcast is off; an operand varying over some but not all is psum's error)."""
    from pyjax._src.config import config
    vma = getattr(getattr(x, "aval", None), "vma", ())
    if any(n in vma for n in names) or not config.auto_pcast:
        return x
    missing = tuple(n for n in _manual_axes.sizes if n in names)
    return pvary_p.bind(x, axes=missing) if missing else x


def _times(size: int, x: Any) -> Any:
    """size * x in x's own type (a Python scalar stays one, as lax._const makes it)."""
    if type(x) in (int, float, complex):
        return type(x)(size) * x
    if isinstance(x, (np.ndarray, np.generic)):
        return np.asarray(size, x.dtype) * x
    from pyjax._src.numpy.ufuncs import multiply
    return multiply(np.asarray(size, x.dtype), x)


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    return _tree_apply(lambda v: pmax_p.bind(v, axis_name=axis_name), x)


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    return _tree_apply(lambda v: pmin_p.bind(v, axis_name=axis_name), x)


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """Mean of x over the members of the named axis."""
    from pyjax._src.numpy.ufuncs import true_divide
    n = psum(1, axis_name)
    return _tree_apply(lambda v: true_divide(v, n), psum(x, axis_name))


def axis_index(axis_name: Any) -> Any:
    """This member's position along the named axis."""
    return axis_index_p.bind(axis_name=axis_name)


def all_gather(x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0,
               tiled: bool = False) -> Any:
    """Every member's x, stacked (or concatenated when tiled) along `axis`."""
    return _tree_apply(lambda v: all_gather_p.bind(v, axis_name=axis_name, axis=int(axis),
                                                   tiled=bool(tiled)), x)


def ppermute(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Send x from member src to member dst for each (src, dst); others receive zeros."""
    perm = tuple((int(s), int(d)) for s, d in perm)
    return _tree_apply(lambda v: ppermute_p.bind(v, axis_name=axis_name, perm=perm), x)


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0,
                 axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """psum, with member i keeping only the i-th slice along `scatter_dimension`."""
    axis_name = _without_size_one(axis_name)
    if axis_name == ():
        return x
    return _tree_apply(lambda v: psum_scatter_p.bind(
        v, axis_name=axis_name, scatter_dimension=int(scatter_dimension), tiled=bool(tiled)), x)


def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *,
               axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """Split x along split_axis across members and concatenate what arrives along
    concat_axis (untiled: the split axis, of the axis size, leaves and a new axis of the axis
    size appears at concat_axis)."""
    def bind(v: Any) -> Any:
        split, concat = int(split_axis), int(concat_axis)
        size = _static_axis_size(axis_name)
        if size is not None and tiled and np.shape(v)[split] % size:
            raise ValueError(f"The size of all_to_all split_axis ({np.shape(v)[split]}) has to "
                             f"be divisible by the size of the named axis {axis_name} ({size})")
        if size is not None and not tiled and size != np.shape(v)[split]:
            raise ValueError("all_to_all requires the size of the mapped axis axis_name to "
                             "equal x.shape[split_axis], but they are "
                             f"{size} and {np.shape(v)[split]} respectively.")
        if not tiled and split < concat:
            concat += 1  # a position after the split axis is removed
            v = shp.expand_dims(v, (concat,))
        elif not tiled and concat < split:
            v = shp.expand_dims(v, (concat,))
            split += 1
        out = all_to_all_p.bind(v, axis_name=axis_name, split_axis=split, concat_axis=concat,
                                tiled=bool(tiled))
        return out if tiled or split == concat else shp.squeeze(out, (split,))
    return _tree_apply(bind, x)


def axis_size(axis_name: Any) -> Any:
    """The size of the named axis (the product of sizes for a tuple of names): psum(1)."""
    return psum(1, axis_name)


def pbroadcast(x: Any, axis_name: Any, source: int) -> Any:
    """Every member receives member `source`'s x."""
    return _tree_apply(lambda v: pbroadcast_p.bind(v, axis_name=axis_name, source=source), x)


def pshuffle(x: Any, axis_name: Any, perm: Sequence[int]) -> Any:
    """ppermute where member i receives from member perm[i]."""
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def pswapaxes(x: Any, axis_name: Any, axis: int, *, axis_index_groups: Any = None) -> Any:
    """Swap the named axis with x's axis `axis` (all_to_all splitting and concatenating it)."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def psend(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Send x from member src to member dst for each (src, dst).  Under vmap this is JAX's
    batching of psend, which permutes like ppermute; on devices it needs a GPU."""
    names = tuple(axis_name) if isinstance(axis_name, (list, tuple)) else (axis_name,)
    perm = tuple((int(s), int(d)) for s, d in perm)
    return _tree_apply(lambda v: psend_p.bind(v, axis_name=names, perm=perm), x)


def precv(token: Any, out_shape: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Receive a value of `out_shape` (a ShapeDtypeStruct) for each (src, dst) of `perm`, after
    `token` (from psend or create_token): JAX's Recv, which it lowers for GPUs only."""
    names = tuple(axis_name) if isinstance(axis_name, (list, tuple)) else (axis_name,)
    aval = ShapedArray(tuple(out_shape.shape), np.dtype(out_shape.dtype))
    if trace_state.trace is None and not isinstance(token, Tracer):  # (eager: a Token is
        # no operand of eager dispatch)
        _precv_eager(token)
    return precv_p.bind(token, out_shape=aval, axis_name=names,
                        perm=tuple((int(s), int(d)) for s, d in perm))


_PCAST_TARGETS = {"unreduced", "reduced", "varying"}


def typing_vma(x: Any) -> bool:
    """Whether values where x lives are typed by the manual axes they vary over: a shard_map
    body with check_vma, staged (vma.typing) or eager (its trace's `types_vma`)."""
    from pyjax._src.transforms.staging import equation_typing
    if equation_typing.rule is not None:
        return True
    return bool(getattr(getattr(x, "_trace", None), "types_vma", False))


def pcast(x: Any, axis_name: Any, *, to: str) -> Any:
    """Change how x varies over the named axes.  pmap's axes do not track it (JAX runs pmap as
    a shard_map without checks), so there the cast is x itself; vmap has no such axes."""
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"{axis_name=} must be a tuple or a str. Got {axis_name}")
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not axis_name:
        return x
    if to not in _PCAST_TARGETS:
        raise ValueError("Got unexpected `to` value. Allowed `to` values are: "
                         f"{_PCAST_TARGETS}")
    if to == "unreduced":  # every value here is invariant: nothing to cast from
        raise ValueError(f"Unsupported pcast from=invarying, {to=}")
    cast = "pvary" if to == "varying" else "preduced"
    names = _without_size_one(names)
    if not names:
        return x
    traces = [_axis_trace(n) for n in names]
    if all(t is not None and _is_device_axis(t) for t in traces):
        return x
    if to == "varying" and all(n in _manual_axes.sizes for n in names):
        # a shard_map body: the cast types x as varying when check_vma types values
        if not typing_vma(x):
            return x
        vma = getattr(getattr(x, "aval", None), "vma", ())
        if all(n in vma for n in names):
            raise ValueError(f"Unsupported pcast from=varying, {to=}")
        return pvary_p.bind(x, axes=names)
    if trace_state.trace is None:
        raise ValueError(f"{cast} should be called under jax.shard_map.")
    for name, t in zip(names, traces):
        if t is None:
            raise NameError(f"Found an unbound axis name: {name}. To fix this, please call "
                            f"{cast} under `jax.shard_map`.")
    if to == "reduced":
        raise NotImplementedError
    raise ValueError("pvary should be called under jax.shard_map.")


def ragged_all_to_all(operand: Any, output: Any, input_offsets: Any, send_sizes: Any,
                      output_offsets: Any, recv_sizes: Any, *, axis_name: Any,
                      axis_index_groups: Any = None) -> Any:
    """all_to_all of ragged chunks: chunk i of `operand` (rows input_offsets[i] + [0,
    send_sizes[i])) goes to member i // (K / axis size), landing at its output_offsets[i]; the
    result is `output` with the received chunks written in."""
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    groups = None if axis_index_groups is None else tuple(map(tuple, axis_index_groups))
    return ragged_all_to_all_p.bind(operand, output, input_offsets, send_sizes,
                                    output_offsets, recv_sizes, axis_name=names,
                                    axis_index_groups=groups)


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """x (a pytree) constrained to `shardings` (one per leaf, or a prefix): the values are
    unchanged on local devices; traced, a `sharding_constraint` equation records it."""
    from pyjax._src.parallel import mesh as mesh_lib
    from pyjax._src.parallel.sharding import NamedSharding, PartitionSpec, Sharding
    from pyjax._src.transforms.batching import _broadcast_prefix
    from pyjax._src.tree_util import tree_flatten, tree_unflatten
    leaves, tree = tree_flatten(x)
    per_leaf = _broadcast_prefix(shardings, tree_unflatten(tree, leaves), "shardings")
    context_mesh = mesh_lib.get_abstract_mesh()
    if context_mesh.empty:  # the deprecated `with mesh:` context, else none
        context_mesh = mesh_lib.resource_mesh()
    outs = []
    for leaf, sharding in zip(leaves, per_leaf):
        if sharding is None:
            raise ValueError(f"One of with_sharding_constraint arguments got sharding {sharding}"
                             " which is not allowed. Please only pass `jax.sharding.Sharding` "
                             "instances.")
        if isinstance(sharding, PartitionSpec):
            if context_mesh.empty:
                raise RuntimeError(
                    "with_sharding_constraint requires a non-empty mesh in context if you are "
                    "passing `PartitionSpec`s to shardings. You can define a context mesh via "
                    "`jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to shardings and "
                    "then the mesh context manager is not required.")
            sharding = NamedSharding(context_mesh, sharding)
        if not isinstance(sharding, Sharding):
            raise TypeError("shardings leaf specifications are expected to be PartitionSpec "
                            f"instances or None, but got {sharding}")
        if not isinstance(sharding, NamedSharding):
            outs.append(sharding_constraint_p.bind(leaf, sharding=sharding, layout=None,
                                                   context_mesh=context_mesh,
                                                   unconstrained_dims=frozenset()))
            continue
        ndim = np.ndim(leaf)
        if len(sharding.spec) > ndim:
            raise ValueError(
                "One of with_sharding_constraint arguments is incompatible with its sharding "
                f"annotation {sharding}: Sharding {sharding} is only valid for values of rank "
                f"at least {len(sharding.spec)}, but was applied to a value of rank {ndim}."
                + (" For scalars the PartitionSpec should be P()" if ndim == 0 else ""))
        if mesh_lib.get_abstract_mesh().are_all_axes_explicit:
            _assert_type_sharding(leaf, sharding)
            outs.append(leaf)
            continue
        unconstrained = frozenset(i for i, a in enumerate(sharding.spec.partitions)
                                  if a is PartitionSpec.UNCONSTRAINED)
        outs.append(sharding_constraint_p.bind(leaf, sharding=sharding, layout=None,
                                               context_mesh=context_mesh,
                                               unconstrained_dims=unconstrained))
    return tree_unflatten(tree, outs)


def _assert_type_sharding(x: Any, sharding: Any) -> None:
    """Under a mesh whose axes are all Explicit, with_sharding_constraint only checks that x's
    type is split as `sharding` says (JAX's assert_shardings_equal; UNCONSTRAINED entries
    match anything)."""
    from pyjax._src.parallel import size_one
    from pyjax._src.parallel.sharding import PartitionSpec
    from pyjax._src.transforms.staging import abstractify
    aval = abstractify(x)
    have = aval.sharding.spec
    user = sharding.spec
    want = user.update(partitions=[*user.partitions] + [None] * (len(aval.shape) - len(user)))
    if size_one.active():
        want = size_one.without_size_one(want, sharding.mesh)
    if any(w is not PartitionSpec.UNCONSTRAINED and h != w
           for h, w in zip(have.partitions, want.partitions)):
        raise AssertionError(
            "`with_sharding_constraint` acts as an assert when all axes of mesh are of type "
            f"`Explicit`. The array sharding: {have} did not match the sharding provided: "
            f"{want}. Please use `jax.sharding.reshard` to shard your input to the sharding "
            "you want.")


# ---------------------------------------------------------------------------------------------
# Differentiation: the data-movement collectives are linear
# ---------------------------------------------------------------------------------------------

ad.deflinear(all_gather_p, lambda ct, x, *, axis_name, axis, tiled: [psum_scatter_p.bind(
    ct, axis_name=axis_name, scatter_dimension=axis, tiled=tiled)])
ad.deflinear(psum_scatter_p, lambda ct, x, *, axis_name, scatter_dimension, tiled: [
    all_gather_p.bind(ct, axis_name=axis_name, axis=scatter_dimension, tiled=tiled)])
ad.deflinear(all_to_all_p, lambda ct, x, *, axis_name, split_axis, concat_axis, tiled: [
    all_to_all_p.bind(ct, axis_name=axis_name, split_axis=concat_axis, concat_axis=split_axis,
                      tiled=tiled)])


# ---------------------------------------------------------------------------------------------
# Printing: staged inside shard_map, collectives print JAX's names and params
# ---------------------------------------------------------------------------------------------

class _Named:
    """Stands in for a primitive whose printed name differs from pyjax's."""

    def __init__(self, name: str):
        self.name = name


def _printed_as(name: str | None, params_of: Callable) -> Callable:
    def rule(eqn: Any, context: Any) -> Any:
        from pyjax._src.core.jaxpr import Eqn, pp_eqn_standard
        if name is not None:
            eqn = Eqn(_Named(name), eqn.invars, eqn.outvars, eqn.params)
        return pp_eqn_standard(eqn, context, params=params_of(eqn))
    return rule


def _reduction_params(eqn: Any) -> dict:
    return {"axes": _names(eqn.params["axis_name"]), "axis_index_groups": None}


def _gathered_size(eqn: Any) -> int:
    p, x, out = eqn.params, eqn.invars[0].aval, eqn.outvars[0].aval
    return out.shape[p["axis"]] // x.shape[p["axis"]] if p["tiled"] else out.shape[p["axis"]]


def _scattered_size(eqn: Any) -> int:
    p, x, out = eqn.params, eqn.invars[0].aval, eqn.outvars[0].aval
    d = p["scatter_dimension"]
    return x.shape[d] // out.shape[d] if p["tiled"] else x.shape[d]


for _prim in (psum_p, pmax_p, pmin_p):
    _prim.pp_rule = _printed_as(None, _reduction_params)
all_gather_p.pp_rule = _printed_as(None, lambda eqn: {
    "all_gather_dimension": eqn.params["axis"], "axis_index_groups": None,
    "axis_name": _names(eqn.params["axis_name"]), "axis_size": _gathered_size(eqn),
    "tiled": eqn.params["tiled"]})
ppermute_p.pp_rule = _printed_as(None, lambda eqn: {
    "axis_name": _names(eqn.params["axis_name"]), "perm": eqn.params["perm"]})
psum_scatter_p.pp_rule = _printed_as("reduce_scatter", lambda eqn: {
    "axis_index_groups": None, "axis_name": _names(eqn.params["axis_name"]),
    "axis_size": _scattered_size(eqn), "scatter_dimension": eqn.params["scatter_dimension"],
    "tiled": eqn.params["tiled"]})
all_to_all_p.pp_rule = _printed_as(None, lambda eqn: {"axis_index_groups": None,
                                                      **eqn.params})
