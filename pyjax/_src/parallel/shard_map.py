"""jax.shard_map: run a function on each device's block of its arguments over a Mesh.

The body is traced once, on one block's shapes, into a `shard_map` equation (collectives
inside staged by mesh axis name).  It runs as nested vmaps, one per manual mesh axis, over
blocks stacked on leading axes (the host devices share one memory, as pmap does); its
derivative rules run that expansion under the transformation; its batching rule is JAX's (a
shard_map of the batched body, the batch axis unsplit in the specs) unless check_vma types the
body, whose expansion is batched then.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import threading
from typing import Any, Callable

import numpy as np

from pyjax._src import caches
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr, eval_jaxpr, pp_eqn_standard
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.trace import trace_state, use_trace
from pyjax._src.parallel import collectives as coll
from pyjax._src.parallel import mesh as mesh_lib
from pyjax._src.parallel import propagation, size_one
from pyjax._src.parallel.sharding import (DuplicateSpecError, NamedSharding, PartitionSpec,
                                          placed)
from pyjax._src.parallel.vma import check_out_vma, infer_vma, typing
from pyjax._src.transforms import ad, batching
from pyjax._src.transforms.batching import (Axis, _broadcast_prefix, batch_flat, batch_jaxpr,
                                            vmap)
from pyjax._src.transforms.staging import abstractify, trace_to_jaxpr
from pyjax._src.tree_util import tree_flatten, tree_unflatten


class InferFromArgs:
    """`in_specs=Infer`: each argument's spec comes from its NamedSharding (else P())."""

    def __repr__(self) -> str:
        return "jax.sharding.Infer"


Infer = InferFromArgs()


def _dim_axes(entry: Any) -> tuple:
    if entry is None or entry is PartitionSpec.UNCONSTRAINED:
        return ()
    return tuple(entry) if isinstance(entry, tuple) else (entry,)


def _spec_axes(spec: PartitionSpec) -> set:
    return {a for entry in spec for a in _dim_axes(entry)}


def _fun_name(f: Callable) -> str:
    return getattr(f, "__name__", type(f).__name__)


def _param_name(f: Callable, i: int) -> str:
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return ""
    if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY,
                                                params[i].POSITIONAL_OR_KEYWORD):
        return f", where args[{i}] is bound to {_fun_name(f)}'s parameter '{params[i].name}'"
    return ""


def _mesh_line(mesh: Any) -> str:
    return (f"The mesh given has shape {tuple(mesh.axis_sizes)} with corresponding axis names "
            f"{tuple(mesh.axis_names)}.")


def _check_in_specs(f: Callable, mesh: Any, manual: frozenset, specs: list, avals: list,
                    leaf_arg: list) -> None:
    """JAX's errors for unknown axes, specs longer than the rank and uneven blocks."""
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
    for spec in specs:
        for name in _spec_axes(spec):
            if name not in manual:
                raise ValueError(
                    f"shard_map in_specs argument must refer to an axis marked as manual "
                    f"({frozenset(manual)}), but:\n\n  in_specs refers to {name!r}\n\n"
                    "Check the in_specs values passed to shard_map.")
        seen: set = set()
        for entry in spec:
            for name in _dim_axes(entry):
                if name in seen:
                    raise DuplicateSpecError(
                        "A single NamedSharding spec specification can map every mesh axis "
                        f"to at most one positional dimension, but {spec} has duplicate "
                        f"entries for `{name}`", mesh, spec)
                seen.add(name)
    fname = _fun_name(f)
    for spec, aval, i in zip(specs, avals, leaf_arg):
        if len(spec) > len(aval.shape):
            raise ValueError(
                f"shard_map applied to the function '{fname}' was given an in_specs entry which "
                "is too long to be compatible with the corresponding input value from the "
                f"function:\n\nin_specs is {spec} which has length {len(spec)}, but the passed "
                f"args[{i}]{_param_name(f, i)}, has shape {aval.str_short()}, which has rank "
                f"{len(aval.shape)} (and {len(aval.shape)} < {len(spec)})\n\nEntries in "
                "in_specs must be of length no greater than the number of axes in the "
                "corresponding input value.\n\nEither revise the spec to be shorter, or modify "
                f"'{fname}' so that its inputs have sufficient rank."
                + ("\n\nFor scalar values (rank 0), consider using an in_specs entry of `P()`, "
                   "where `P = jax.sharding.PartitionSpec`." if not aval.shape else ""))
    for spec, aval, i in zip(specs, avals, leaf_arg):
        for d, entry in enumerate(spec):
            axes = _dim_axes(entry)
            n = int(np.prod([sizes[a] for a in axes])) if axes else 1
            if aval.shape[d] % n:
                what = (f"mesh axis {axes[0]!r} (of size {n})" if len(axes) == 1 else
                        f"mesh axes {axes} (of total size {n})")
                raise ValueError(
                    f"shard_map applied to the function '{fname}' was given argument arrays "
                    "with axis sizes that are not evenly divisible by the corresponding mesh "
                    f"axis sizes:\n\n{_mesh_line(mesh)}\n\nthe passed args[{i}] of shape "
                    f"{aval.str_short()}{_param_name(f, i)}, corresponds to in_specs of value "
                    f"{spec}, which maps array axis {d} (of size {aval.shape[d]}) to {what}, "
                    f"but {n} does not evenly divide {aval.shape[d]}\n\nArray arguments' axis "
                    "sizes must be evenly divisible by the mesh axis or axes indicated by the "
                    "corresponding elements of the argument's in_specs entry. Consider checking "
                    "that in_specs are correct, and if so consider changing the mesh axis sizes "
                    f"or else padding the input and adapting '{fname}' appropriately.")


def _check_explicit_args(mesh: Any, manual: frozenset, specs: list, leaves: list,
                         avals: list) -> None:
    """Over a mesh whose axes are all Explicit and all made manual, JAX's error for a placed
    argument laid out otherwise than its in_specs entry says (arrays not placed by a
    NamedSharding count as replicated; traced arguments carry no layout to check here)."""
    if manual != frozenset(mesh.axis_names) or any(
            t != mesh_lib.AxisType.Explicit for t in mesh.axis_types):
        return
    for x, spec, aval in zip(leaves, specs, avals):
        if not isinstance(x, ArrayImpl):
            continue
        ndim = len(aval.shape)
        want = spec._normalized_spec_for_aval(ndim)
        sharding = x.sharding
        have = (sharding.spec._normalized_spec_for_aval(ndim)
                if isinstance(sharding, NamedSharding) else PartitionSpec(*[None] * ndim))
        if size_one.active():  # compared as the argument's type says it is split
            want = size_one.without_size_one(want, mesh)
            have = size_one.without_size_one(have, mesh)
        if have != want:
            raise ValueError(
                f"in_specs passed to shard_map: {want} does not match the specs of the input: "
                f"{have} for arg: {aval.str_short()}. `in_specs` is an optional argument so "
                "you can omit specifying it and shard_map will infer the in_specs from the "
                "arguments. If you want to reshard your inputs, you can use `jax.reshard` on "
                "the arguments and then pass those args to shard_map.")


def _block_aval(aval: ShapedArray, spec: PartitionSpec, sizes: dict) -> ShapedArray:
    shape = list(aval.shape)
    for d, entry in enumerate(spec):
        for a in _dim_axes(entry):
            shape[d] //= sizes[a]
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def _global_aval(aval: ShapedArray, spec: PartitionSpec, sizes: dict) -> ShapedArray:
    shape = list(aval.shape)
    for d, entry in enumerate(spec):
        for a in _dim_axes(entry):
            shape[d] *= sizes[a]
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def _check_out_ranks(f: Callable, specs: list, avals: list) -> None:
    fname = _fun_name(f)
    for spec, aval in zip(specs, avals):
        if len(spec) > len(aval.shape):
            raise ValueError(
                f"shard_map applied to the function '{fname}' was given an out_specs entry "
                "which is too long to be compatible with the corresponding output value from "
                f"the function:\n\nout_specs is {spec} which has length {len(spec)}, but "
                f"{fname}(*args) has shape {aval.str_short()}, which has rank "
                f"{len(aval.shape)} (and {len(aval.shape)} < {len(spec)})\n\nEntries in "
                "out_specs must be of length no greater than the number of axes in the "
                "corresponding output value.\n\nEither revise the spec to be shorter, or modify "
                f"'{fname}' so that its outputs have sufficient rank."
                + ("\n\nFor scalar values (rank 0), consider using an out_specs entry of `P()`, "
                   "where `P = jax.sharding.PartitionSpec`. In particular, for rank 0 outputs "
                   "which are not constant over the mesh, add at least one (singleton) axis to "
                   "them so that they can be concatenated using out_specs."
                   if not aval.shape else ""))


# ---------------------------------------------------------------------------------------------
# Running a body: blocks stacked on leading axes, one vmap per manual mesh axis
# ---------------------------------------------------------------------------------------------

def _to_blocks(x: Any, spec: PartitionSpec, order: tuple, sizes: dict) -> Any:
    """x with each mesh axis of `spec` split off its dimension and moved to the front, in
    mesh order."""
    from pyjax._src.primitives import shape as shp
    shape, split_pos, pos = [], {}, 0
    for d, size in enumerate(np.shape(x)):
        axes = _dim_axes(spec[d]) if d < len(spec) else ()
        block = size
        for a in axes:
            block //= sizes[a]
            split_pos[a] = pos
            shape.append(sizes[a])
            pos += 1
        shape.append(block)
        pos += 1
    if not split_pos:
        return x
    front = [split_pos[a] for a in order if a in split_pos]
    rest = [i for i in range(len(shape)) if i not in front]
    return shp.transpose(shp.reshape(x, tuple(shape)), tuple(front + rest))


def _from_blocks(y: Any, spec: PartitionSpec, order: tuple, sizes: dict) -> Any:
    """Inverse of `_to_blocks` for outputs stacked along every manual axis: the axes the spec
    does not name are replicated, so their first member is kept."""
    from pyjax._src.primitives import indexing as idx
    from pyjax._src.primitives import shape as shp
    named = _spec_axes(spec)
    for k in reversed(range(len(order))):  # drop the unnamed stacked axes
        if order[k] not in named:
            y = shp.squeeze(idx.slice_in_dim(y, 0, 1, axis=k), (k,))
    stacked = [a for a in order if a in named]
    block = np.shape(y)[len(stacked):]
    perm, shape = [], []
    for d, size in enumerate(block):
        axes = _dim_axes(spec[d]) if d < len(spec) else ()
        perm += [stacked.index(a) for a in axes] + [len(stacked) + d]
        shape.append(size * int(np.prod([sizes[a] for a in axes])) if axes else size)
    if not stacked:
        return y
    return shp.reshape(shp.transpose(y, tuple(perm)), tuple(shape))


def _manual_order(mesh: Any, manual: frozenset) -> tuple:
    return tuple(a for a in mesh.axis_names if a in manual)


def _expanded(params: dict) -> Callable:
    """The shard_map as a function of the global arrays (flat in, flat out)."""
    closed: ClosedJaxpr = params["jaxpr"]
    mesh = params["mesh"]
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
    order = _manual_order(mesh, params["newly_manual_axes"])
    in_specs, out_specs = params["in_specs"], params["out_specs"]

    def body(*blocks: Any) -> list:
        for name in order:  # the vmaps stand for devices (partial ppermutes give zeros)
            coll.mark_device_axis(coll._axis_trace(name))
        return eval_jaxpr(closed.jaxpr, closed.consts, *blocks)

    def run(*args: Any) -> list:
        mapped = body
        for name in reversed(order):
            in_axes = tuple(0 if name in _spec_axes(s) else None for s in in_specs)
            mapped = vmap(mapped, in_axes=in_axes, out_axes=0, axis_name=name,
                          axis_size=sizes[name])
        blocks = [_to_blocks(x, s, order, sizes) for x, s in zip(args, in_specs)]
        with coll.manual_axes({a: sizes[a] for a in order}):  # for bodies re-staged inside
            outs = mapped(*blocks)
        return [_from_blocks(y, s, order, sizes) for y, s in zip(outs, out_specs)]

    return run


_jitted: dict = {}
_jitted_lock = threading.Lock()
caches.register(_jitted.clear)


def _run_compiled(args: tuple, params: dict) -> list:
    """Evaluate: the expansion under jit, built once per equation."""
    from pyjax._src.transforms.jit import jit
    key = id(params["jaxpr"])
    entry = _jitted.get(key)
    if entry is None or entry[0] is not params["jaxpr"]:
        entry = (params["jaxpr"], jit(_expanded(params)))
        with _jitted_lock:
            if len(_jitted) > 256:
                _jitted.pop(next(iter(_jitted)), None)
            _jitted[key] = entry
    return entry[1](*args)


def _impl(*args: Any, **params: Any) -> list:
    return [np.asarray(o) for o in _run_compiled(args, params)]


def _eager(prim: Primitive, args: tuple, params: dict) -> list:
    outs = _run_compiled(args, params)
    mesh = params["mesh"]
    if not isinstance(mesh, mesh_lib.Mesh):
        return outs
    return [placed(o, NamedSharding(mesh, s)) if isinstance(o, ArrayImpl) else o
            for o, s in zip(outs, params["out_specs"])]


def _abstract_eval(*avals: ShapedArray, **params: Any) -> list:
    mesh = params["mesh"]
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
    return [_global_aval(a, s, sizes)
            for a, s in zip(params["jaxpr"].out_avals, params["out_specs"])]


def _jvp(primals: tuple, tangents: tuple, **params: Any) -> tuple:
    return ad.jvp_flat(_expanded(params), primals, tangents)


def _partial_eval(trace: Any, args: tuple, params: dict) -> list:
    with use_trace(trace):
        return _expanded(params)(*args)


def _batch(axis: Axis, vals: list, dims: list, **params: Any) -> tuple:
    """JAX's shard_map batching rule: a shard_map of the batched body, the batch axis of each
    operand and result left unsplit in its spec (None inserted there), so vmap(pmap(f))
    stages JAX's jaxpr.  Under check_vma the body's types name the axes values vary over, which
    batching does not keep: that shard_map is batched through its expansion."""
    if params["check_vma"]:
        return batch_flat(_expanded(params), vals, dims, axis.size, axis.name)
    mesh = params["mesh"]
    order = _manual_order(mesh, params["newly_manual_axes"])
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
    with coll.manual_axes({a: sizes[a] for a in order}):
        body, out_dims = batch_jaxpr(params["jaxpr"], dims, axis)
    in_specs = tuple(s if d is None else _batch_spec(s, d)
                     for s, d in zip(params["in_specs"], dims))
    out_specs = tuple(s if d is None else _batch_spec(s, d)
                      for s, d in zip(params["out_specs"], out_dims))
    outs = shard_map_p.bind(*vals, **dict(params, jaxpr=body, in_specs=in_specs,
                                          out_specs=out_specs))
    return outs, out_dims


def _batch_spec(spec: PartitionSpec, dim: int) -> PartitionSpec:
    """`spec` with an unsplit axis inserted at `dim` (JAX's pxla.batch_spec)."""
    entries = (*spec, *(None,) * (dim - len(spec)))
    return PartitionSpec(*entries[:dim], None, *entries[dim:])


def _pp(eqn: Any, context: Any) -> Any:
    params = dict(eqn.params, newly_manual_axes=coll._SortedSet(
        eqn.params["newly_manual_axes"]))
    return pp_eqn_standard(eqn, context, params=params)


def _sharding_rule(eqn: Any, ins: list, sizes: dict) -> list:
    """The results are laid out as out_specs says."""
    return [propagation.Given(s, len(v.aval.shape))
            for s, v in zip(eqn.params["out_specs"], eqn.outvars)]


shard_map_p = Primitive("shard_map", multiple_results=True)
shard_map_p.impl = _impl
shard_map_p.eager = _eager
shard_map_p.abstract_eval = _abstract_eval
shard_map_p.jvp = _jvp
shard_map_p.partial_eval = _partial_eval
batching.defcall(shard_map_p, _batch, "jaxpr")
shard_map_p.pp_rule = _pp
shard_map_p.sharding_rule = _sharding_rule
shard_map_p.result_mesh = lambda params: params["mesh"]


# ---------------------------------------------------------------------------------------------
# The API
# ---------------------------------------------------------------------------------------------

def _context_mesh() -> Any:
    mesh = mesh_lib.get_abstract_mesh()
    if mesh.empty:
        mesh = mesh_lib.resource_mesh()
    if mesh.empty:
        raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter "
                         "into a mesh context")
    return mesh


def _inferred_spec(x: Any) -> PartitionSpec:
    """An argument's in_spec when shard_map is given none: a concrete array's layout, a
    traced value's sharding over Explicit mesh axes (its type's)."""
    if isinstance(x, ArrayImpl):
        sharding = x.sharding
    else:
        sharding = getattr(getattr(x, "aval", None), "explicit_sharding", None)
    if isinstance(sharding, NamedSharding):
        return sharding.spec
    return PartitionSpec()


def shard_map(f: Callable | None = None, /, *, out_specs: Any, in_specs: Any = Infer,
              mesh: Any = None, axis_names: Any = frozenset(), check_vma: bool = True
              ) -> Callable:
    """Map `f` over the blocks of its arguments that `in_specs` lays over `mesh`; its outputs'
    blocks are joined as `out_specs` says.  Collectives inside name mesh axes."""
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                 axis_names=axis_names, check_vma=check_vma)
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, but got {f} "
                        f"of type {type(f)}.")

    @functools.wraps(f)
    def wrapped(*args: Any) -> Any:
        the_mesh = _context_mesh() if mesh is None else mesh
        manual = frozenset(axis_names) or frozenset(the_mesh.axis_names)
        leaves, in_tree = tree_flatten(args)
        if in_specs is Infer:
            specs = [_inferred_spec(x) for x in leaves]
        elif isinstance(in_specs, PartitionSpec):
            specs = [in_specs] * len(leaves)
        else:
            specs = _broadcast_prefix(in_specs, args, "shard_map in_specs")
        specs = [PartitionSpec() if s is None else s for s in specs]
        avals = [abstractify(x) for x in leaves]
        leaf_arg = _leaf_arg_positions(args)
        _check_in_specs(f, the_mesh, manual, specs, avals, leaf_arg)
        _check_explicit_args(the_mesh, manual, specs, leaves, avals)
        sizes = dict(zip(the_mesh.axis_names, the_mesh.axis_sizes))
        block_avals = [_block_aval(a, s, sizes) for a, s in zip(avals, specs)]
        if trace_state.trace is None:
            concrete = mesh_lib.get_concrete_mesh() if mesh is None else mesh
            return _call_eager(f, the_mesh if concrete.empty else concrete, manual, check_vma,
                               leaves, in_tree, specs, out_specs)
        order = _manual_order(the_mesh, manual)
        typed = size_one.kept_axes(the_mesh, manual)  # the axes values' types may name
        if check_vma:  # the body's inputs vary over the manual axes their specs name
            block_avals = [a.update(vma=tuple(n for n in order
                                              if n in _spec_axes(s) and n in typed))
                           for a, s in zip(block_avals, specs)]
        manual_sizes = {a: sizes[a] for a in order}
        closed, out_tree = _trace_body(f, in_tree, tuple(block_avals), manual_sizes,
                                       bool(check_vma), out_specs)
        out_leaf_specs = _out_leaf_specs(out_specs, out_tree)
        _check_out_ranks(f, out_leaf_specs, closed.out_avals)
        if check_vma:
            with coll.manual_axes(manual_sizes):
                vmas = infer_vma(closed, [frozenset(_spec_axes(s)) & typed for s in specs],
                                 check=True, order=order)
            check_out_vma(the_mesh, manual, out_leaf_specs, vmas)
        outs = shard_map_p.bind(*leaves, check_vma=bool(check_vma),
                                in_specs=tuple(specs), jaxpr=closed, mesh=the_mesh,
                                newly_manual_axes=manual, out_specs=tuple(out_leaf_specs))
        return tree_unflatten(out_tree, outs)

    return wrapped


def _all_blocks(x: Any, spec: PartitionSpec, order: tuple, sizes: dict) -> Any:
    """x's blocks stacked on leading axes, one per manual axis in mesh order (the blocks of
    the axes `spec` does not name repeated)."""
    from pyjax._src.primitives import shape as shp
    y = _to_blocks(x, spec, order, sizes)
    named = [k for k, a in enumerate(order) if a in _spec_axes(spec)]
    if len(named) == len(order):
        return y
    block = np.shape(y)[len(named):]
    dims = tuple(named) + tuple(range(len(order), len(order) + len(block)))
    return shp.broadcast_in_dim(y, tuple(sizes[a] for a in order) + tuple(block), dims)


def _call_eager(f: Callable, mesh: Any, manual: frozenset, check_vma: bool, leaves: list,
                in_tree: Any, specs: list, out_specs: Any) -> Any:
    """shard_map outside any transformation: the body runs at once on every device's blocks
    (shard_map_eager), so it can print them; results placed by `out_specs`."""
    from pyjax._src.parallel.shard_map_eager import as_array, run_eager
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
    order = _manual_order(mesh, manual)
    blocks = [_all_blocks(as_array(x), s, order, sizes) for x, s in zip(leaves, specs)]
    box: list = []

    def flat(*xs: Any) -> list:
        out_leaves, tree = tree_flatten(f(*tree_unflatten(in_tree, list(xs))))
        box.append(tree)
        return out_leaves

    typed = size_one.kept_axes(mesh, manual)
    outs, vmas = run_eager(flat, mesh, order, {a: sizes[a] for a in order}, bool(check_vma),
                           blocks, [frozenset(_spec_axes(s)) & typed for s in specs])
    out_leaf_specs = _out_leaf_specs(out_specs, box[0])
    _check_out_ranks(f, out_leaf_specs, [
        ShapedArray(np.shape(o)[len(order):], o.dtype) for o in outs])
    if check_vma:
        check_out_vma(mesh, manual, out_leaf_specs, vmas)
    results = [_from_blocks(o, s, order, sizes) for o, s in zip(outs, out_leaf_specs)]
    if isinstance(mesh, mesh_lib.Mesh):
        results = [placed(o, NamedSharding(mesh, s)) if isinstance(o, ArrayImpl) else o
                   for o, s in zip(results, out_leaf_specs)]
    return tree_unflatten(box[0], results)


def _leaf_arg_positions(args: tuple) -> list:
    return [i for i, a in enumerate(args) for _ in tree_flatten(a)[0]]


def _out_leaf_specs(out_specs: Any, out_tree: Any) -> list:
    dummy = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    specs = _broadcast_prefix(out_specs, dummy, "shard_map out_specs")
    return [PartitionSpec() if s is None else s for s in specs]


_bodies: dict = {}
caches.register(_bodies.clear)


def _vary_as_spec(x: Any, spec: PartitionSpec, order: tuple) -> Any:
    """A body output cast (pvary) to vary over the manual axes (`order`) its out_spec names
    but it does not (JAX's implicit pvary at a body's end under check_vma)."""
    have = frozenset(getattr(getattr(x, "aval", None), "vma", ()))
    named = _spec_axes(spec)
    dropped = size_one.dropped_manual_axes()
    missing = tuple(n for n in order if n in named and n not in have and n not in dropped)
    return coll.pvary_p.bind(x, axes=missing) if missing else x


def _specs_key(specs: Any) -> tuple:
    """A hashable stand-in for an out_specs pytree (of PartitionSpecs and Nones)."""
    leaves, tree = tree_flatten(specs, is_leaf=lambda s: s is None
                                or isinstance(s, PartitionSpec))
    return tuple(leaves), tree


def _trace_body(f: Callable, in_tree: Any, block_avals: tuple, sizes: dict, check: bool,
                out_specs: Any) -> tuple:
    """The body's closed jaxpr on one block's avals, and its output tree (traced once per
    function, input types, mesh axes and out_specs); with `check` (check_vma) its values are
    typed by the manual axes (`sizes`' keys, in mesh order) they vary over, and outputs are
    cast to vary over the axes their out_specs name (unless jax.auto_pcast is off)."""
    from pyjax._src.config import config
    key = (f, in_tree, block_avals, tuple(a.vma for a in block_avals),
           tuple(sorted(sizes.items(), key=str)), check, _specs_key(out_specs),
           config.trace_key())
    hit = _bodies.get(key)
    if hit is not None:
        return hit
    box: list = []

    def flat(*xs: Any) -> list:
        out = f(*tree_unflatten(in_tree, list(xs)))
        leaves, tree = tree_flatten(out)
        box.append(tree)
        if check and config.auto_pcast:
            leaves = [_vary_as_spec(v, s, tuple(sizes))
                      for v, s in zip(leaves, _out_leaf_specs(out_specs, tree))]
        return leaves

    typed = typing(tuple(sizes)) if check else contextlib.nullcontext()
    with coll.manual_axes(sizes), typed:
        closed = trace_to_jaxpr(flat, list(block_avals))
    result = (closed, box[0])
    if len(_bodies) > 256:
        _bodies.pop(next(iter(_bodies)), None)
    _bodies[key] = result
    return result
