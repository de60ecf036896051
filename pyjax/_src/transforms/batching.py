"""vmap: a batch trace carries each value with the position of its batch axis (or None).

A primitive's `batch` rule, `batch(vals, dims, **params) -> (out, out_dim)`, runs under the
parent trace and moves axes only when it must.  Helpers declare the common families
(elementwise, vectorized) in a line.  Named axes: the trace knows its axis name and size, which
collective primitives read through `batch_collective(trace, vals, dims, **params)`.  Call
primitives (jit, checkpoint, custom_jvp/custom_vjp) batch their bodies into new jaxprs and bind
again (`defcall`, `batch_jaxpr`), so batched programs keep their calls as JAX's do.
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src import caches
from pyjax._src.backend.dispatch import as_operand
from pyjax._src.core import dtypes
from pyjax._src.core.array import Array, ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.trace import Trace, Tracer, check_alive, trace_state, use_trace
from pyjax._src.transforms.staging import abstractify
from pyjax._src.tree_util import tree_flatten, tree_structure, tree_unflatten

not_mapped = None


# ---------------------------------------------------------------------------------------------
# Axis helpers (rules use these; all bind lax primitives)
# ---------------------------------------------------------------------------------------------

def move_axis(x: Any, src: int, dst: int) -> Any:
    """x with axis `src` moved to position `dst` (a transpose; nothing when equal)."""
    from pyjax._src.primitives.shape import transpose_p
    if src == dst:
        return x
    perm = list(range(x.ndim))
    del perm[src]
    perm.insert(dst, src)
    return transpose_p.bind(x, permutation=tuple(perm))


def broadcast_batch(x: Any, size: int, dim: int) -> Any:
    """Unbatched x with a new batch axis of `size` at `dim`."""
    shape = list(np.shape(x))
    shape.insert(dim, size)
    if getattr(x, "dtype", None) == dtypes.float0:  # tangents of integers: NumPy zeros
        return np.zeros(shape, dtypes.float0)
    return _broadcast_keeping_numpy_ints(x, shape, dim)


def _broadcast_keeping_numpy_ints(x: Any, shape: list, dim: int) -> Any:
    """broadcast_in_dim with the batch axis at `dim`; JAX's batchers pass NumPy ints as the
    broadcast dimensions, which jaxprs print as np.int64(k), so they are kept as such."""
    from pyjax._src.primitives.shape import broadcast_in_dim_p
    kept = tuple(np.int64(i) for i in range(len(shape)) if i != dim)
    return broadcast_in_dim_p.bind(x, shape=tuple(int(s) for s in shape),
                                   broadcast_dimensions=kept, sharding=None)


def bdim_at_front(x: Any, dim: int | None, size: int) -> Any:
    """x with its batch axis first (materialised by broadcasting when x is unbatched)."""
    return broadcast_batch(x, size, 0) if dim is None else move_axis(x, dim, 0)


def defvectorized(prim: Primitive) -> None:
    """Unary elementwise: the batch axis passes through."""
    def rule(vals: Sequence[Any], dims: Sequence[Any], **params: Any) -> tuple:
        return prim.bind(*vals, **params), dims[0]
    prim.batch = rule


def broadcasting_batcher(prim: Primitive, at_front: Callable | None = None,
                         expand: Callable | None = None) -> Callable:
    """The batch rule of an n-ary elementwise `prim` (JAX's broadcast_batcher).  Operands that
    all share the first batched operand's shape and batch axis (rank-0 ones aside) are bound as
    they are.  Otherwise every non-scalar operand gets its batch axis first (a size-1 axis for
    unbatched ones, which lax's broadcasting stretches) and batched operands of lower rank
    (per-example scalars) get trailing size-1 axes.  `at_front(x, dim, size)` and
    `expand(x, dims)` do the moves (for operands of extended dtypes, such as keys)."""
    from pyjax._src.primitives.shape import expand_dims
    at_front = at_front or bdim_at_front
    expand = expand or expand_dims

    def rule(vals: Any, dims: Any, **params: Any) -> tuple:
        shape, dim = next((np.shape(v), d) for v, d in zip(vals, dims) if d is not None)
        if all(np.shape(v) == shape and d == dim for v, d in zip(vals, dims) if np.ndim(v)):
            out_dim = dim
        else:
            vals = [at_front(v, d, 1) if np.ndim(v) else v for v, d in zip(vals, dims)]
            ndim = max(np.ndim(v) for v in vals)
            vals = [v if d is None or np.ndim(v) == ndim else
                    expand(v, tuple(range(np.ndim(v), ndim))) for v, d in zip(vals, dims)]
            out_dim = 0
        out = prim.bind(*vals, **params)
        return (out, [out_dim] * len(out)) if prim.multiple_results else (out, out_dim)
    return rule


def defbroadcasting(prim: Primitive) -> None:
    """vmap `prim` (n-ary, elementwise with lax's implicit broadcasting) as JAX does."""
    prim.batch = broadcasting_batcher(prim)


# ---------------------------------------------------------------------------------------------
# The trace
# ---------------------------------------------------------------------------------------------

class BatchTracer(Tracer):
    __slots__ = ("val", "batch_dim", "_aval")
    tracer_name = "BatchTracer"

    def __init__(self, trace: "BatchTrace", val: Any, batch_dim: int | None):
        self._trace, self.val, self.batch_dim = trace, val, batch_dim
        self._aval = None

    @property
    def aval(self) -> ShapedArray:
        """The per-example aval (computed once: shape/dtype/ndim are read often)."""
        if self._aval is None:
            val, d = self.val, self.batch_dim
            if type(val) is ArrayImpl:
                buf = val._buf
                shape, dtype, weak = buf.shape, buf.dtype, val._weak
            else:
                aval = abstractify(val)
                shape, dtype, weak = aval.shape, aval.dtype, aval.weak_type
            self._aval = ShapedArray(shape[:d] + shape[d + 1:], dtype, weak)
        return self._aval


class BatchTrace(Trace):
    """Values with a batch axis of `axis_size`, named `axis_name` (for collectives)."""

    def __init__(self, parent: Trace | None, axis_size: int, axis_name: Any = None):
        self.parent, self.axis_size, self.axis_name = parent, axis_size, axis_name

    def lift(self, x: Any) -> tuple[Any, int | None]:
        """(value, batch axis) of `x` as this trace sees it (None: unbatched)."""
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.batch_dim
        if isinstance(x, Tracer):
            check_alive(x)
        return x, None

    def process_primitive(self, prim: Primitive, args: tuple, params: dict) -> Any:
        vals, dims = [], []
        for x in args:  # `lift`, inlined: this runs for every operand of every batched op
            if type(x) is BatchTracer and x._trace is self:
                vals.append(x.val)
                dims.append(x.batch_dim)
            else:
                if isinstance(x, Tracer):
                    check_alive(x)
                vals.append(x)
                dims.append(None)
        collective = prim.batch_collective
        previous, trace_state.trace = trace_state.trace, self.parent  # rules run in the parent
        try:
            if collective is not None:
                out, out_dim = collective(self, vals, dims, **params)
            elif dims.count(None) == len(dims):
                return prim.bind(*vals, **params)
            elif prim.batch is None:
                raise NotImplementedError(f"Batching rule for '{prim.name}' not implemented")
            else:
                out, out_dim = prim.batch(vals, dims, **params)
        finally:
            trace_state.trace = previous
        if prim.multiple_results:
            return [self.wrap(o, d) for o, d in zip(out, out_dim)]
        return self.wrap(out, out_dim)

    def wrap(self, val: Any, dim: int | None) -> Any:
        return val if dim is None else BatchTracer(self, val, dim)


def batch_flat(fun: Callable[..., Sequence[Any]], args: Sequence[Any],
               in_dims: Sequence[int | None], axis_size: int, axis_name: Any = None
               ) -> tuple[list, list]:
    """Run flat `fun` on batched `args`: outputs and their batch axes (None: unbatched)."""
    previous = trace_state.trace
    trace = BatchTrace(previous, axis_size, axis_name)
    tracers = [a if d is None else BatchTracer(trace, a, d) for a, d in zip(args, in_dims)]
    trace_state.trace = trace
    try:
        outs = fun(*tracers)
    finally:
        trace_state.trace = previous
        trace.finish()
    lifted = [trace.lift(o) for o in outs]
    return [v for v, _ in lifted], [d for _, d in lifted]


# ---------------------------------------------------------------------------------------------
# vmap
# ---------------------------------------------------------------------------------------------

#: values a vmapped function may return unbatched without a check
_VALUES = (Array, np.ndarray, np.generic, bool, int, float, complex)


def _check_output(x: Any) -> None:
    """JAX's error for a vmapped function's output that is no JAX value (a string, ...)."""
    try:
        abstractify(x)
    except TypeError as e:
        raise TypeError(f"Output from batched function {x!r} with type {type(x)} is not a "
                        "valid JAX type") from e


def _broadcast_prefix(prefix: Any, tree: Any, what: str) -> list:
    """`prefix` (in_axes/out_axes) expanded to one entry per leaf of `tree`."""
    if prefix is None or isinstance(prefix, int):
        return [prefix] * len(tree_flatten(tree)[0])
    if isinstance(prefix, list) and isinstance(tree, tuple):
        prefix = tuple(prefix)
    leaves: list = []
    prefix_leaves, prefix_tree = tree_flatten(prefix, is_leaf=lambda x: x is None)
    try:
        subtrees = prefix_tree.flatten_up_to(tree)
    except (ValueError, TypeError) as e:
        raise ValueError(f"vmap {what} specification must be a tree prefix of the "
                         f"corresponding value, got specification {prefix} for value tree "
                         f"{tree_structure(tree)}.") from e
    for p, sub in zip(prefix_leaves, subtrees):
        leaves.extend([p] * len(tree_flatten(sub)[0]))
    return leaves


def _inconsistent_sizes(fun: Callable, args: tuple, kwargs: dict, flat: list,
                        dims: list) -> str:
    """JAX's message listing the mapped axes by size, naming the arguments."""
    from pyjax._src.transforms.staging import DebugInfo
    try:
        names = DebugInfo("vmap", fun, args, kwargs).arg_names()
    except Exception:  # noqa: BLE001 - names are a courtesy; the sizes are the message
        names = [f"args[{i}]" for i in range(len(flat))]
    groups: dict[int, list] = {}
    for name, x, d in zip(names, flat, dims):
        if d is not None:
            groups.setdefault(np.shape(x)[d], []).append((name, x, d))
    lines = []
    for size, members in groups.items():
        name, x, d = members[0]
        where = f"axis {d} of argument {name} of type {abstractify(x).str_short()}"
        if len(members) == 1:
            lines.append(f"  * one axis had size {size}: {where}")
        else:
            lines.append(f"  * most axes ({len(members)} of them) had size {size}, e.g. {where}")
    return "vmap got inconsistent sizes for array axes to be mapped:\n" + ";\n".join(lines)


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Any = None,
         axis_size: int | None = None, spmd_axis_name: Any = None) -> Callable:
    """Vectorise `fun` over axis `in_axes` of its arguments (see jax.vmap)."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or isinstance(in_axes, (int, tuple, dict))):
        raise TypeError(f"vmap in_axes must be an int, None, or a tuple of entries "
                        f"corresponding to the positional arguments passed to the function, "
                        f"but got {in_axes}.")

    @functools.wraps(fun)
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(f"vmap in_axes must be an int, None, or a tuple of entries "
                             f"corresponding to the positional arguments passed to the "
                             f"function, but got len(in_axes)={len(in_axes)}, "
                             f"len(args)={len(args)}")
        if isinstance(in_axes, int) and not kwargs and all(isinstance(a, Array) for a in args):
            flat, in_tree = list(args), None  # the common case: arrays, no pytree work
            axes = [in_axes] * len(flat)
        else:
            flat, in_tree = tree_flatten((args, kwargs))
            axes = [in_axes] * len(flat) if isinstance(in_axes, int) and not kwargs else \
                _broadcast_prefix((in_axes, 0), (args, kwargs), "in_axes")
            # unmapped leaves reach `fun` as they are (a Python float stays one), as in JAX
            flat = [x if a is None or isinstance(x, Array) else as_operand(x)
                    for x, a in zip(flat, axes)]
        dims = []
        sizes = set()
        for x, a in zip(flat, axes):
            if a is None:
                dims.append(None)
                continue
            shape = x.shape
            nd = len(shape)
            if not -nd <= a < nd:
                raise ValueError(f"vmap was requested to map its argument along axis {a}, "
                                 f"which implies that its rank should be at least {a + 1}, "
                                 f"but is only {nd} (its shape is {shape})")
            a %= nd
            dims.append(a)
            sizes.add(shape[a])
        if axis_size is not None:
            sizes.add(axis_size)
        if not sizes:
            raise ValueError("vmap must have at least one non-None value in in_axes or "
                             "axis_size must be specified")
        if len(sizes) > 1:
            raise ValueError(_inconsistent_sizes(fun, args, kwargs, flat, dims))
        size = sizes.pop()
        out_trees: list = []

        def flat_fun(*leaves: Any) -> list:
            if in_tree is None:
                out = fun(*leaves)
            else:
                a, kw = tree_unflatten(in_tree, leaves)
                out = fun(*a, **kw)
            if isinstance(out, Array):  # one array: no pytree work
                out_trees.append(None)
                return [out]
            out_leaves, out_tree = tree_flatten(out)
            out_trees.append(out_tree)
            return out_leaves

        outs, out_dims = batch_flat(flat_fun, flat, dims, size, axis_name)
        out_tree = out_trees[0]
        if isinstance(out_axes, int):
            targets = [out_axes] * len(outs)
        else:
            tree = outs[0] if out_tree is None else tree_unflatten(out_tree, outs)
            targets = _broadcast_prefix(out_axes, tree, "out_axes")
        results = []
        for o, d, t in zip(outs, out_dims, targets):
            if d is None and not isinstance(o, _VALUES):
                _check_output(o)
            if t is None:
                if d is not None:
                    raise ValueError(f"at vmap out_axes, got axis spec None but output was "
                                     f"batched on axis {d}")
                results.append(o)
                continue
            nd = np.ndim(o) + 1 if d is None else len(o.shape)
            if not -nd <= t < nd:
                raise ValueError(f"axis {t} is out of bounds for array of dimension {nd}")
            t %= nd
            if d is None:
                results.append(broadcast_batch(o, size, t))
            else:
                results.append(o if d == t else move_axis(o, d, t))
        return results[0] if out_tree is None else tree_unflatten(out_tree, results)

    return vmapped


# ---------------------------------------------------------------------------------------------
# Call primitives (jit, checkpoint, custom_jvp_call, custom_vjp_call): the body is batched into
# a new jaxpr and the primitive bound again, so batched programs keep their calls, as JAX's do.
# ---------------------------------------------------------------------------------------------

class Axis:
    """The mapped axis a call rule batches over: its size, its name (for collectives in the
    body) and the batch trace itself (None when the rule is called without one)."""

    __slots__ = ("size", "name", "trace")

    def __init__(self, size: int, name: Any = None, trace: BatchTrace | None = None):
        self.size, self.name, self.trace = size, name, trace


def unmapped_aval(aval: ShapedArray, size: int, dim: int) -> ShapedArray:
    """`aval` with a batch axis of `size` inserted at `dim`."""
    shape = list(aval.shape)
    shape.insert(dim, size)
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def match_axis(x: Any, src: int | None, dst: int | None, size: int, sum_match: bool = False
               ) -> Any:
    """x (batched at `src`, or unbatched) with its batch axis at `dst`: moved, broadcast, or
    (with `sum_match`, for cotangents of unbatched inputs) summed away when `dst` is None."""
    if src == dst:
        return x
    if src is None:
        return broadcast_batch(x, size, dst)
    if dst is None:
        if not sum_match:
            raise ValueError("a batched value cannot be matched to an unbatched axis")
        from pyjax._src.primitives.reductions import reduce_sum
        return reduce_sum(x, (src,))
    return move_axis(x, src, dst)


#: batched bodies, per closed jaxpr (weakly) and (in axes, size, name, front, x64): repeated
#: calls of one function share one batched jaxpr (JAX caches its batched jaxprs alike, which
#: shows when a printed program hoists a shared sub-jaxpr).
_batched_bodies: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()

caches.register(_batched_bodies.clear)


def batch_jaxpr(closed: Any, dims: Sequence[int | None], axis: Axis, front: bool = False
                ) -> tuple[Any, list]:
    """The body of the closed jaxpr `closed` run on inputs batched at `dims`, staged as a new
    closed jaxpr over the batched avals; and the batch axes of its outputs (None: unbatched).
    With `front`, batched outputs get their axis first."""
    from pyjax._src.config import config
    from pyjax._src.core.jaxpr import eval_jaxpr
    from pyjax._src.transforms.staging import trace_to_jaxpr
    key = (tuple(dims), axis.size, axis.name, front, config.x64)
    cacheable = not any(isinstance(c, Tracer) for c in closed.consts)
    if cacheable:
        try:
            hit = _batched_bodies.setdefault(closed, {}).get(key)
        except TypeError:  # an unhashable axis name
            cacheable, hit = False, None
        if hit is not None:
            return hit[0], list(hit[1])
    in_avals = [a if d is None else unmapped_aval(a, axis.size, d)
                for a, d in zip(closed.in_avals, dims)]
    out_dims_box: list = []

    def body(*args: Any) -> list:
        outs, out_dims = batch_flat(lambda *a: eval_jaxpr(closed.jaxpr, closed.consts, *a),
                                    args, dims, axis.size, axis.name)
        if front:
            outs = [o if d is None else move_axis(o, d, 0) for o, d in zip(outs, out_dims)]
            out_dims = [None if d is None else 0 for d in out_dims]
        out_dims_box.append(out_dims)
        return outs

    batched = trace_to_jaxpr(body, in_avals)
    out_dims = out_dims_box[0]
    if cacheable:
        _batched_bodies[closed][key] = (batched, tuple(out_dims))
    return batched, list(out_dims)


def _uses_axis(jaxpr: Any, name: Any) -> bool:
    """Whether a collective in `jaxpr` (or its sub-jaxprs) names the axis `name`."""
    from pyjax._src.core.jaxpr import jaxprs_in_params
    for eqn in jaxpr.eqns:
        named = eqn.params.get("axis_name", ())
        named = tuple(named) if isinstance(named, (tuple, list)) else (named,)
        if eqn.primitive.batch_collective is not None and name in named:
            return True
        if any(_uses_axis(sub, name) for sub in jaxprs_in_params(eqn.params)):
            return True
    return False


def own_tracer_consts(closed: Any, trace: BatchTrace | None) -> bool:
    """Whether the constants of `closed` include tracers of `trace` (a body that closes over
    values being batched)."""
    return trace is not None and any(isinstance(c, BatchTracer) and c._trace is trace
                                     for c in closed.consts)


def defcall(prim: Primitive, rule: Callable[..., tuple], body_param: str) -> None:
    """Install `rule(axis, vals, dims, **params) -> (outs, out_dims)` for the call primitive
    `prim`, whose body is the closed jaxpr `params[body_param]`.

    It is installed as `batch` (axis size from the operands, no name) and as
    `batch_collective`, which BatchTrace prefers: that one passes the trace's name, so
    collectives in the body reduce over the mapped axis, and it binds an unbatched call as it is
    unless its body names the axis or closes over values being batched."""
    def batch(vals: Sequence[Any], dims: Sequence[Any], **params: Any) -> tuple:
        size = next(np.shape(v)[d] for v, d in zip(vals, dims) if d is not None)
        return rule(Axis(size), vals, dims, **params)

    def collective(trace: BatchTrace, vals: Sequence[Any], dims: Sequence[Any],
                   **params: Any) -> tuple:
        body = params[body_param]
        if all(d is None for d in dims) and not own_tracer_consts(body, trace) and not (
                trace.axis_name is not None and _uses_axis(body.jaxpr, trace.axis_name)):
            outs = prim.bind(*vals, **params)
            return outs, [None] * len(outs)
        return rule(Axis(trace.axis_size, trace.axis_name, trace), vals, dims, **params)

    prim.batch = batch
    prim.batch_collective = collective


def inline_call(axis: Axis, closed: Any, vals: Sequence[Any], dims: Sequence[Any]
                ) -> tuple[list, list]:
    """Batch a call by running its body under the batch trace itself (for bodies closing over
    that trace's tracers, which a separately staged body could not see)."""
    from pyjax._src.core.jaxpr import eval_jaxpr
    trace = axis.trace
    with use_trace(trace):
        outs = eval_jaxpr(closed.jaxpr, closed.consts,
                          *[trace.wrap(v, d) for v, d in zip(vals, dims)])
    lifted = [trace.lift(o) for o in outs]
    return [v for v, _ in lifted], [d for _, d in lifted]


def lift_own_consts(axis: Axis, closed: Any) -> tuple[Any, list, list]:
    """`closed` with its constants that are tracers of the batch trace made leading inputs:
    (the new closed jaxpr, their values, their batch axes)."""
    from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr
    if not own_tracer_consts(closed, axis.trace):
        return closed, [], []
    jaxpr, trace = closed.jaxpr, axis.trace
    own = [isinstance(c, BatchTracer) and c._trace is trace for c in closed.consts]
    kept = [(v, c) for v, c, o in zip(jaxpr.constvars, closed.consts, own) if not o]
    moved = [(v, c) for v, c, o in zip(jaxpr.constvars, closed.consts, own) if o]
    new = Jaxpr([v for v, _ in kept], [v for v, _ in moved] + list(jaxpr.invars),
                jaxpr.outvars, jaxpr.eqns, jaxpr.debug_info)
    lifted = [trace.lift(c) for _, c in moved]
    return (ClosedJaxpr(new, [c for _, c in kept]), [v for v, _ in lifted],
            [d for _, d in lifted])
