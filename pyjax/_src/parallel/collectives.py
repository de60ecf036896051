"""Collectives over named axes (psum, pmean, pmax, pmin, all_gather, ppermute, axis_index,
psum_scatter, all_to_all).

Each is a primitive whose `batch_collective` rule acts on the batch axis of the vmap/pmap trace
carrying that name; under a trace with another name it passes through, applied elementwise
along that trace's axis.  Outside any trace bearing the name it is an error, as in JAX.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.primitives import reductions as red
from pyjax._src.primitives import shape as shp
from pyjax._src.transforms import ad
from pyjax._src.transforms.batching import BatchTrace, bdim_at_front, broadcast_batch, move_axis


def _names(axis_name: Any) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _unbound(*args: Any, axis_name: Any, **_: Any) -> Any:
    raise NameError(f"unbound axis name: {_names(axis_name)[0]}")


def _collective(name: str, on_axis: Callable[..., tuple], abstract_eval: Callable,
                multiple_results: bool = False) -> Primitive:
    """A primitive that, under the BatchTrace named `axis_name`, runs `on_axis(trace, vals,
    dims, **params)`; elsewhere it passes through keeping the batch axes."""
    prim = Primitive(name, multiple_results=multiple_results)
    prim.impl = _unbound
    prim.abstract_eval = abstract_eval

    def batch_collective(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any],
                         **params: Any) -> tuple:
        if trace.axis_name is not None and trace.axis_name in _names(params["axis_name"]):
            return on_axis(trace, vals, dims, **params)
        if all(d is None for d in dims):
            out = prim.bind(*vals, **params)
            return out, ([None] * len(out) if multiple_results else None)
        vals = [bdim_at_front(v, d, trace.axis_size) for v, d in zip(vals, dims)]
        out = prim.bind(*vals, **params)
        return out, ([0] * len(out) if multiple_results else 0)

    prim.batch_collective = batch_collective
    return prim


def _same_aval(x: ShapedArray, **_: Any) -> ShapedArray:
    return x


def _reducer(reduce: Callable) -> Callable:
    def on_axis(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any],
                **params: Any) -> tuple:
        (x,), (d,) = vals, dims
        if d is None:  # the same value on every member of the axis
            return (reduce(broadcast_batch(x, trace.axis_size, 0), [0]), None)
        return reduce(x, [d]), None
    return on_axis


psum_p = _collective("psum", _reducer(red.reduce_sum), _same_aval)
pmax_p = _collective("pmax", _reducer(red.reduce_max), _same_aval)
pmin_p = _collective("pmin", _reducer(red.reduce_min), _same_aval)
ad.deflinear(psum_p, lambda ct, x, *, axis_name: [psum_p.bind(ct, axis_name=axis_name)])
ad.defjvp(pmax_p, None)
ad.defjvp(pmin_p, None)


def _axis_index_on_axis(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any],
                        *, axis_name: Any) -> tuple:
    return shp.iota(np.int32, trace.axis_size), 0


axis_index_p = _collective("axis_index", _axis_index_on_axis,
                           lambda *, axis_name: ShapedArray((), np.dtype(np.int32)))
ad.defjvp_zero(axis_index_p)


def _all_gather_on_axis(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any], *,
                        axis_name: Any, axis: int, tiled: bool) -> tuple:
    (x,), (d,) = vals, dims
    x = bdim_at_front(x, d, trace.axis_size)
    gathered = move_axis(x, 0, axis)
    if tiled:
        shape = list(np.shape(gathered))
        shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
        gathered = shp.reshape(gathered, shape)
    return gathered, None


def _all_gather_abstract(x: ShapedArray, *, axis_name: Any, axis: int, tiled: bool
                         ) -> ShapedArray:
    raise NameError(f"unbound axis name: {_names(axis_name)[0]}")


all_gather_p = _collective("all_gather", _all_gather_on_axis, _all_gather_abstract)


def _ppermute_on_axis(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any], *,
                      axis_name: Any, perm: tuple) -> tuple:
    (x,), (d,) = vals, dims
    x = bdim_at_front(x, d, trace.axis_size)
    source_of = {dst: src for src, dst in perm}
    rows = []
    zero = None
    for dst in range(trace.axis_size):
        if dst in source_of:
            rows.append(shp.squeeze(shp.slice(x, (source_of[dst],) + (0,) * (np.ndim(x) - 1),
                                               (source_of[dst] + 1,) + np.shape(x)[1:]), [0]))
        else:
            zero = zero if zero is not None else ad.zeros_like_aval(
                ShapedArray(np.shape(x)[1:], np.dtype(x.dtype)))
            rows.append(zero)
    return shp.stack_p.bind(*rows, axis=0), 0


ppermute_p = _collective("ppermute", _ppermute_on_axis, _same_aval)
ad.deflinear(ppermute_p, lambda ct, x, *, axis_name, perm: [
    ppermute_p.bind(ct, axis_name=axis_name, perm=tuple((d, s) for s, d in perm))])


def _psum_scatter_on_axis(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any], *,
                          axis_name: Any, scatter_dimension: int, tiled: bool) -> tuple:
    summed, _ = _reducer(red.reduce_sum)(trace, vals, dims)
    n = trace.axis_size
    shape = list(np.shape(summed))
    if tiled:
        shape[scatter_dimension:scatter_dimension + 1] = [n, shape[scatter_dimension] // n]
        summed = shp.reshape(summed, shape)
    return move_axis(summed, scatter_dimension, 0), 0


psum_scatter_p = _collective("psum_scatter", _psum_scatter_on_axis, _same_aval)


def _all_to_all_on_axis(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any], *,
                        axis_name: Any, split_axis: int, concat_axis: int, tiled: bool) -> tuple:
    (x,), (d,) = vals, dims
    x = bdim_at_front(x, d, trace.axis_size)  # member axis first, then the per-member axes
    n = trace.axis_size
    shape = list(np.shape(x))
    split = split_axis + 1
    shape[split:split + 1] = [n, shape[split] // n]
    x = shp.reshape(x, shape)  # (member, ..., chunk index, chunk, ...)
    x = move_axis(x, split, 0)  # chunk index becomes the new member axis
    x = move_axis(x, 1, concat_axis + 1 + (1 if concat_axis >= split_axis else 0) - 1)
    out_shape = list(np.shape(x))
    c = concat_axis + 1
    out_shape[c:c + 2] = [out_shape[c] * out_shape[c + 1]] if tiled else out_shape[c:c + 2]
    return (shp.reshape(x, out_shape) if tiled else x), 0


all_to_all_p = _collective("all_to_all", _all_to_all_on_axis, _same_aval)


# ---------------------------------------------------------------------------------------------
# lax functions
# ---------------------------------------------------------------------------------------------

def _tree_apply(fn: Callable, x: Any) -> Any:
    from pyjax._src.tree_util import tree_map
    return tree_map(fn, x)


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """Sum of x over the members of the named axis."""
    return _tree_apply(lambda v: psum_p.bind(v, axis_name=axis_name), x)


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    return _tree_apply(lambda v: pmax_p.bind(v, axis_name=axis_name), x)


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    return _tree_apply(lambda v: pmin_p.bind(v, axis_name=axis_name), x)


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """Mean of x over the members of the named axis."""
    from pyjax._src.numpy.ufuncs import true_divide
    n = psum(1, axis_name)
    return _tree_apply(lambda v: true_divide(psum_p.bind(v, axis_name=axis_name), n), x)


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
    return _tree_apply(lambda v: psum_scatter_p.bind(
        v, axis_name=axis_name, scatter_dimension=int(scatter_dimension), tiled=bool(tiled)), x)


def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *,
               axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """Split x along split_axis across members and concatenate what arrives along
    concat_axis."""
    return _tree_apply(lambda v: all_to_all_p.bind(
        v, axis_name=axis_name, split_axis=int(split_axis), concat_axis=int(concat_axis),
        tiled=bool(tiled)), x)


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
