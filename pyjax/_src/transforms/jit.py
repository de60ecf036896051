"""jit: trace once per (function, argument structure and avals, static values), then reuse.

The cache lives per underlying function (a weak mapping), so separate `jit(f)` wrappers of the
same `f` share it while a fresh `partial` or `lambda` is a new function and retraces.  Outside
any transformation a hit runs the compiled jaxpr; under a transformation the call is one `jit`
equation holding the sub-jaxpr, so outer transformations see a single call primitive.
"""
from __future__ import annotations

import functools
import inspect
import operator
import sys
import threading
import traceback
import weakref
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src import caches, monitoring
from pyjax._src.backend import async_dispatch
from pyjax._src.backend.async_dispatch import PendingArray
from pyjax._src.backend.caller import make_caller
from pyjax._src.backend.dispatch import detach, scalar_buffer, to_buffer, wrap
from pyjax._src.backend.executor import compile_jaxpr
from pyjax._src.backend.fp_mode import KEPT, SWITCHED, flush_off, flush_on, run_unflushed
from pyjax._src.config import config, config_global as _GLOBAL_OPTIONS, config_local
from pyjax._src.core import array as array_lib, dtypes
from pyjax._src.core.array import Array, ArrayImpl
from pyjax._src.core.avals import MemorySpace, ShapedArray, pytype_aval_mappings
from pyjax._src.core.jaxpr import (
    ClosedJaxpr, Eqn, Jaxpr, PrintContext, Var, dce, eval_jaxpr, jaxpr_has_effects,
    pp_eqn_standard)
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.trace import Tracer, trace_state, use_trace
from pyjax._src.parallel.mesh import context_key as mesh_context_key
from pyjax._src.parallel.propagation import nested_call, output_shardings, program_mesh
from pyjax._src.parallel import sharding as sharding_lib
from pyjax._src.parallel.sharding import NamedSharding, placed
from pyjax._src.transforms import ad, batching, staging
from pyjax._src.transforms.staging import (
    DebugInfo, abstractify, fun_sourceinfo, trace_to_jaxpr)
from pyjax._src.tree_util import _flat_tuple_treedef, tree_flatten, tree_unflatten

CACHE_SIZE = 512  # traces kept per function; the least recently used is dropped first
_REFRESH_AT = CACHE_SIZE // 2  # from this many traces on, a hit also renews recency

# ---------------------------------------------------------------------------------------------
# The call primitive
# ---------------------------------------------------------------------------------------------

jit_p = Primitive("jit", multiple_results=True)


def _jit_impl(*bufs: np.ndarray, jaxpr: ClosedJaxpr, name: str) -> list:
    return compile_jaxpr(jaxpr, name)(bufs)


def _jit_abstract_eval(*avals: ShapedArray, jaxpr: ClosedJaxpr, name: str) -> list:
    return jaxpr.out_avals


def _jit_pp_rule(eqn: Any, context: PrintContext) -> Any:
    sub = eqn.params["jaxpr"].jaxpr
    if sub not in context.shared_jaxprs:
        context.suggest_same_names(sub.invars, eqn.invars)
        context.suggest_same_names(sub.outvars, eqn.outvars)
    return pp_eqn_standard(eqn, context, ["name", "jaxpr"])


jit_p.impl = _jit_impl
jit_p.abstract_eval = _jit_abstract_eval
jit_p.pp_rule = _jit_pp_rule
jit_p.sharding_rule = nested_call


# ---------------------------------------------------------------------------------------------
# Transformation rules of the call primitive (they live with it)
# ---------------------------------------------------------------------------------------------

#: jaxprs derived from a jit's body (its JVP, partial evaluation, transpose), per body and
#: per what they depend on: calling grad again reuses the same derived jaxpr objects, and so
#: their compiled executables, instead of tracing and compiling anew each time (as JAX's
#: caches of these transformations do)
_derived: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()


def _derive(jaxpr: ClosedJaxpr, key: tuple, build: Callable[[], Any]) -> Any:
    """`build()`, once per (jaxpr, key, trace-affecting config)."""
    per = _derived.get(jaxpr)
    if per is None:
        per = _derived.setdefault(jaxpr, {})
    key = (key, config.trace_key())
    out = per.get(key)
    if out is None:
        out = per[key] = build()
    return out


def _jit_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: ClosedJaxpr,
             name: str) -> tuple[list, list]:
    nonzero = [type(t) is not ad.Zero for t in tangents]
    n = len(primals)
    # integer outputs have float0 tangents: they stay symbolic zeros outside the jit
    out_tangent_avals = [ad.tangent_aval(a) for a in jaxpr.out_avals]
    returned = [a.dtype != dtypes.float0 for a in out_tangent_avals]

    def jvp_of_body(*args: Any) -> list:
        given = iter(args[n:])
        tangents_in = [next(given) if nz else t for nz, t in zip(nonzero, tangents)]
        outs, outs_dot = ad.jvp_flat(lambda *a: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *a),
                                  args[:n], tangents_in)
        return outs + [ad.instantiate(t) for t, keep in zip(outs_dot, returned) if keep]

    nz_tangents = [t for t, nz in zip(tangents, nonzero) if nz]
    avals = [abstractify(x) for x in (*primals, *nz_tangents)]
    body = _derive(jaxpr, ("jvp", tuple(nonzero), tuple(avals)),
                   lambda: trace_to_jaxpr(jvp_of_body, avals))
    k = len(jaxpr.out_avals)
    pe = trace_state.trace
    if isinstance(pe, ad.PartialEvalTrace):  # linearize
        unknowns = tuple(pe.is_unknown(x) for x in (*primals, *nz_tangents))
        full = body
        body, returned = _derive(jaxpr, ("linearized jvp", tuple(nonzero), tuple(avals),
                                         unknowns),
                                 lambda: _drop_known_tangents(full, k, returned, unknowns))
    outs = jit_p.bind(*primals, *nz_tangents, jaxpr=body, name=name)
    out_dots = iter(outs[k:])
    return outs[:k], [next(out_dots) if keep else ad.Zero(a)
                      for keep, a in zip(returned, out_tangent_avals)]


def _drop_known_tangents(body: ClosedJaxpr, k: int, returned: list, unknowns: tuple
                         ) -> tuple[ClosedJaxpr, list]:
    """Under linearize, the jvp body without the output tangents that depend on no unknown
    input (a custom_jvp rule's zeros_like): JAX's linearize of a jit call makes them symbolic
    zeros (linearize_jaxpr), so the call neither computes nor returns them."""
    out_uk = ad.partial_eval_jaxpr(body, list(unknowns), False)[2]
    keep = [True] * k + [uk for uk in out_uk[k:]]
    if all(keep):
        return body, returned
    j = body.jaxpr
    pruned, _ = dce(Jaxpr(j.constvars, j.invars, [v for v, kp in zip(j.outvars, keep) if kp],
                          j.eqns, j.debug_info), [True] * sum(keep))
    kept = iter(keep[k:])
    return ClosedJaxpr(pruned, body.consts), [next(kept) if r else False for r in returned]


def _jit_partial_eval(pe: ad.PartialEvalTrace, args: tuple, params: dict) -> list:
    """Split a jit call as JAX does: a known jit computes the known outputs and the residuals
    now; an unknown jit, fed the known inputs it reads, the residuals and the unknown inputs,
    is staged.  The body is split by running it under partial evaluation, so jit calls nested
    in it split the same way (recursively)."""
    closed: ClosedJaxpr = params["jaxpr"]
    name = params["name"]
    unknowns = [pe.is_unknown(a) for a in args]
    known, staged, out_uk, res_fwd, res_out, out_fwd, used = _derive(
        closed, ("partial_eval", tuple(unknowns)), lambda: _split_jit_body(closed, unknowns))
    known_args = [a for a, u in zip([a for a, uk in zip(args, unknowns) if not uk], used) if u]
    with use_trace(pe.parent):
        known_vals = iter(jit_p.bind(*known_args, jaxpr=known, name=name))
    known_outs = [args[f] if f is not None else next(known_vals) for f in out_fwd]
    computed_vals = known_vals
    residuals = [args[f] if f is not None else known_outs[o] if o is not None
                 else next(computed_vals) for f, o in zip(res_fwd, res_out)]
    staged_outs: list = []
    if any(out_uk):
        # residuals in the order the unknown side first reads them (forwarded known inputs
        # included), as JAX's linearize of a jit orders its tangent jaxpr's constants
        operands = residuals + [a for a, uk in zip(args, unknowns) if uk]
        staged_outs = pe.staging.process_primitive(jit_p, tuple(operands),
                                                   {"jaxpr": staged, "name": name})
    known_it, staged_it = iter(known_outs), iter(staged_outs)
    return [next(staged_it) if uk else next(known_it) for uk in out_uk]


def _split_jit_body(closed: ClosedJaxpr, unknowns: list) -> tuple:
    """(known jaxpr taking only the known inputs it reads, staged jaxpr, which outputs are
    unknown, which input each residual is (or None), which known output each other residual
    is (or None: computed, an output of its own), which input each known output is (or
    None), which known inputs are read).  As JAX's linearize of a jit call forwards them, a
    known output that is an input, and a residual that is a known output, are not outputs of
    the known call."""
    known, staged, out_uk, _, res_fwd = ad.partial_eval_jaxpr(closed, unknowns, False)
    n_known_outs = len(out_uk) - sum(out_uk)
    kj = known.jaxpr
    known_inputs = [i for i, uk in enumerate(unknowns) if not uk]
    input_at = {v: known_inputs[j] for j, v in enumerate(kj.invars)}
    out_fwd = [input_at.get(v) if type(v) is Var else None for v in kj.outvars[:n_known_outs]]
    primal_at: dict = {}
    for i, v in enumerate(kj.outvars[:n_known_outs]):
        if type(v) is Var:
            primal_at.setdefault(v, i)
    res_out = [primal_at.get(v) if f is None else None
               for v, f in zip(kj.outvars[n_known_outs:], res_fwd)]
    outvars = [v for v, f in zip(kj.outvars[:n_known_outs], out_fwd) if f is None] + [
        v for v, f, o in zip(kj.outvars[n_known_outs:], res_fwd, res_out)
        if f is None and o is None]
    kj, used = dce(Jaxpr(kj.constvars, kj.invars, outvars, kj.eqns), [True] * len(outvars),
                   prune_invars=True)
    return ClosedJaxpr(kj, known.consts), staged, out_uk, res_fwd, res_out, out_fwd, used


def _jit_transpose(cts: Sequence[Any], *args: Any, jaxpr: ClosedJaxpr, name: str) -> list:
    """A jit of the transposed body: takes the known inputs and output cotangents, returns
    the cotangents of the linear inputs (as JAX's grad jaxprs show)."""
    known = [a for a in args if not ad.is_undefined(a)]
    nonzero = [type(c) is not ad.Zero for c in cts]
    cts_given = [c for c in cts if type(c) is not ad.Zero]
    # integer (float0) inputs get no cotangent out of the jit: they are ad.Zero outside it
    returned = [ad.is_undefined(a) and a.aval.dtype != dtypes.float0 for a in args]

    def transposed(*flat: Any) -> list:
        given_known, given_cts = iter(flat[:len(known)]), iter(flat[len(known):])
        full_args = [a if ad.is_undefined(a) else next(given_known) for a in args]
        full_cts = [next(given_cts) if nz else c for nz, c in zip(nonzero, cts)]
        out = iter(ad.transpose_jaxpr(jaxpr.jaxpr, jaxpr.consts, full_args, full_cts))
        per_arg = [next(out) if ad.is_undefined(a) else None for a in args]
        return [ad.instantiate(c) for c, keep in zip(per_arg, returned) if keep]

    avals = [abstractify(x) for x in (*known, *cts_given)]
    pattern = tuple(a.aval if ad.is_undefined(a) else None for a in args)
    body = _derive(jaxpr, ("transpose", pattern, tuple(nonzero), tuple(avals)),
                   lambda: trace_to_jaxpr(transposed, avals))
    cts_in = iter(jit_p.bind(*known, *cts_given, jaxpr=body, name=name))
    return [next(cts_in) if keep else (ad.Zero(a.aval) if ad.is_undefined(a) else None)
            for a, keep in zip(args, returned)]


def _jit_batch(axis: batching.Axis, vals: Sequence[Any], dims: Sequence[Any], *, jaxpr: Any,
               name: str) -> tuple:
    """A jit of the batched body (`jit[name=...]` stays in batched programs, as in JAX)."""
    batched, out_dims = batching.batch_jaxpr(jaxpr, dims, axis)
    return jit_p.bind(*vals, jaxpr=batched, name=name), out_dims


def _jit_dce(used_outputs: list[bool], eqn: Eqn) -> Eqn | None:
    """JAX's jit DCE rule: the call without the results nobody reads and the operands its
    body then does not read (the pruned body derived once per body and pattern, so repeated
    grads keep one executable); None when nothing of it is needed and it has no effects."""
    body: ClosedJaxpr = eqn.params["jaxpr"]
    if not any(used_outputs) and not jaxpr_has_effects(body.jaxpr):
        return None
    if all(used_outputs):
        return eqn

    def build() -> tuple:
        pruned, used_in = dce(body.jaxpr, used_outputs, prune_invars=True,
                              prune_equations=True)
        return ClosedJaxpr(pruned, body.consts), used_in
    pruned, used_in = _derive(body, ("dce", tuple(used_outputs)), build)
    return Eqn(jit_p, [a for a, u in zip(eqn.invars, used_in) if u],
               [v for v, u in zip(eqn.outvars, used_outputs) if u],
               dict(eqn.params, jaxpr=pruned), eqn.source_info)


jit_p.jvp = _jit_jvp
jit_p.partial_eval = _jit_partial_eval
jit_p.dce_rule = _jit_dce
jit_p.transpose = _jit_transpose
batching.defcall(jit_p, _jit_batch, "jaxpr")


# ---------------------------------------------------------------------------------------------
# Argument handling
# ---------------------------------------------------------------------------------------------

def _scalar_signatures(x64: bool) -> dict[type, tuple]:
    ints, floats, complexes = ((dtypes.int64, dtypes.float64, dtypes.complex128) if x64 else
                               (dtypes.int32, dtypes.float32, dtypes.complex64))
    return {bool: ((), dtypes.bool_, False), int: ((), ints, True), float: ((), floats, True),
            complex: ((), complexes, True)}


_SCALAR_SIGNATURES = {False: _scalar_signatures(False), True: _scalar_signatures(True)}


def _keyed_placement(sharding: Any) -> bool:
    """Whether an Array placed by `sharding` needs the general path's cache key: laid out over
    a mesh, or typed in host memory (`f32<host>[4]`, a trace of its own)."""
    return sharding is not None and (type(sharding) is NamedSharding
                                     or sharding.memory_kind == "pinned_host")


def _memory_space(x: ArrayImpl) -> Any:
    """x's memory space when its type says it is outside device memory, else None."""
    from pyjax._src.core.avals import MemorySpace
    from pyjax._src.memory import of_array
    space = of_array(x)
    return None if space is MemorySpace.Device else space


def _leaf_signature(x: Any) -> Any:
    """(shape, dtype, weak_type): the part of a leaf that decides whether a trace is reused.
    Concrete arrays, scalars and tracers of one aval share a trace, as in JAX."""
    t = type(x)
    if t is ArrayImpl:
        buf = x._buf
        typed = None if staging.sharding_typing is None else staging.type_sharding(x)
        space = None if staging.memory_typing is None else _memory_space(x)
        if typed is None and space is None:  # (split over no Explicit mesh axis, on device)
            return (buf.shape, buf.dtype, x._weak)
        return (buf.shape, buf.dtype, x._weak, (), typed, space)
    if t in dtypes.python_scalar_dtypes:
        return _SCALAR_SIGNATURES[config.x64][t]
    if isinstance(x, Tracer):
        aval = x.aval
        if getattr(aval, "vma", ()) or getattr(aval, "explicit_sharding", None) is not None:
            # (typed by the axes it varies over, in a shard_map body, or by its sharding)
            return (aval.shape, aval.dtype, aval.weak_type, aval.vma, aval.explicit_sharding)
        return (aval.shape, aval.dtype, aval.weak_type)
    if isinstance(x, (np.ndarray, np.generic)):
        return (x.shape, dtypes.canonicalize_dtype(x.dtype), False)
    if isinstance(x, Array):  # arrays of an extended dtype (PRNG keys)
        aval = x.aval
        return (aval.shape, aval.dtype, aval.weak_type)
    if hasattr(x, "__jax_array__"):
        return _leaf_signature(x.__jax_array__())
    to_aval = pytype_aval_mappings.get(t)
    if to_aval is not None:  # references, tokens and hijax values: keyed by their type
        return (to_aval(x),)
    raise TypeError(
        f"Error interpreting argument to jitted function as an abstract array. The problematic "
        f"value is of type {type(x)} and was passed as a dynamic argument. Only arrays, "
        f"Python scalars and pytrees of them can be dynamic; mark the argument static with "
        f"static_argnums or static_argnames.")


def _run(entry: "_Entry", buffers: list) -> list:
    """The executable on the arguments' buffers, computed as XLA computes (fp_mode)."""
    if flush_on(KEPT) is not SWITCHED:
        return entry.run(buffers)
    try:
        return entry.run(buffers)
    finally:
        flush_off()


def _trace_options() -> Any:
    """The trace-affecting options as a cache key part: the process-wide ones by number (no
    tuple to hash) while this thread overrides none."""
    return config.trace_key() if config_local.values else config.global_trace_number


def _cache_key(in_tree: Any, has_kwargs: bool, statics: tuple, leaves: list) -> tuple:
    """A trace's key in its function's cache: the arguments' structure, the trace options,
    the mesh context and each leaf's signature.  Positional leaves alone (the common call)
    are keyed by their count, which `_call_arrays` builds without hashing a PyTreeDef; any
    other structure by a tuple holding its PyTreeDef, so the two never meet."""
    n = len(leaves)
    if not has_kwargs and not statics and in_tree == _flat_tuple_treedef(n):
        structure: Any = n
    else:
        structure = (in_tree, has_kwargs, statics)
    return (structure, _trace_options(), mesh_context_key(), *map(_leaf_signature, leaves))


#: per x64 setting, each supported dtype -> its canonical dtype (what an argument becomes)
_CANONICAL = {True: {np.dtype(d): np.dtype(d) for d in dtypes.supported_dtypes},
              False: {np.dtype(d): np.dtype(dtypes._to_32bit.get(np.dtype(d), d))
                      for d in dtypes.supported_dtypes}}
_MISS = object()


def _leaf_input(x: Any) -> Any:
    """What a queued run takes for leaf `x`: its buffer, but a pending Array's Result (not a
    buffer: `async_dispatch.resolved` turns a list of these into buffers for a run now)."""
    if type(x) is ArrayImpl:
        return x._buf
    if type(x) is PendingArray:
        return async_dispatch.pending_input(x)
    if type(x) in dtypes.python_scalar_dtypes:
        return scalar_buffer(x)[0]
    if type(x) in pytype_aval_mappings:  # a reference or token: the program takes it as is
        return x
    return to_buffer(x)[0]


def _async_leaves(leaves: list) -> bool:
    """Whether a call on `leaves` may be queued: Arrays not laid out over a mesh and Python
    scalars (a NumPy array could change before the worker reads it)."""
    for x in leaves:
        t = type(x)
        if t is ArrayImpl or t is PendingArray:
            if x._sharding is not None and type(x._sharding) is NamedSharding:
                return False
        elif t not in dtypes.python_scalar_dtypes:
            return False
    return True


_PYJAX_DIR = __file__.rsplit("/_src/", 1)[0]


def _user_frames_text(exc: BaseException) -> str:
    """A traceback, outermost first, of the caller's stack and `exc`'s own frames with
    pyjax's frames left out (the shape of the text JAX's C++ dispatch shows)."""
    frames = traceback.extract_stack(sys._getframe(2)) + traceback.extract_tb(exc.__traceback__)
    lines = "".join(f'  File "{f.filename}", line {f.lineno}, in {f.name}\n' for f in frames
                    if not f.filename.startswith(_PYJAX_DIR))
    return f"Traceback (most recent call last):\n{lines}{type(exc).__name__}: {exc}"


class _Static:
    """A static argument in a cache key: equal only to a value of the very same type (so 1,
    1.0 and True trace separately, as in JAX); a failing `__eq__` becomes JAX's ValueError."""

    __slots__ = ("val",)

    def __init__(self, val: Any):
        self.val = val

    def __hash__(self) -> int:
        return hash(self.val)

    def __eq__(self, other: Any) -> bool:
        if type(self.val) is not type(other.val):
            return False
        try:
            return bool(self.val == other.val)
        except Exception as e:  # noqa: BLE001 - any user error is reported the same way
            raise ValueError(
                "static arguments should be comparable using __eq__.The following error was "
                f"raised when comparing two objects of types {type(self.val)} and "
                f"{type(other.val)}. The error was:\n{_user_frames_text(e)}") from None


def _hashable_static(value: Any) -> _Static:
    try:
        hash(value)
    except TypeError as e:
        raise ValueError(
            "Non-hashable static arguments are not supported. An error occurred while trying to "
            f"hash an object of type {type(value)}, {value}. The error was:\n"
            f"{type(e).__name__}: {e}\n") from None
    return _Static(value)


class _Entry:
    """One cached trace: the jaxpr, its compiled form, and how to rebuild the output pytree."""

    __slots__ = ("jaxpr", "run", "call", "call_numpy", "out_avals", "out_tree", "placements",
                 "lays_out", "host_results", "name", "sync_call", "is_async")

    def __init__(self, jaxpr: ClosedJaxpr, out_tree: Any, name: str | None = None):
        self.jaxpr, self.out_tree, self.name = jaxpr, out_tree, name
        self.out_avals = jaxpr.out_avals
        # compiled on the first run, not here: a jit only ever traced inside another (jnp's
        # own jitted helpers) is inlined there and never runs, so compiling it (tier 1
        # kernels) would be wasted work in the outer function's first call
        self.run = self._compile_and_run
        self.call = self._compile_and_call
        self.call_numpy = self._make_call_numpy  # (made when first called with NumPy arrays)
        self.placements: dict = {}  # the arguments' shardings -> the results' (or None)
        # results typed in host memory (`f32<host>[4]`) are placed there, as JAX's are
        self.host_results = [i for i, a in enumerate(self.out_avals)
                             if getattr(a, "memory_space", None) is MemorySpace.Host]
        # the program lays its values out itself (device_put to a mesh, into host memory...)
        self.lays_out = program_mesh(jaxpr.jaxpr) is not None or bool(self.host_results)
        self.is_async: bool | None = None  # (known once compiled)

    def _compile(self) -> None:
        # (as XLA compiles)
        self.run = run = run_unflushed(compile_jaxpr, self.jaxpr, self.name)
        self.sync_call = make_caller(run.positional, len(self.jaxpr.jaxpr.invars),
                                     self.out_avals, self.out_tree)
        self.is_async = not self.lays_out and async_dispatch.worth_async(self.jaxpr,
                                                                           self.out_avals)
        self.call = self._call_async if self.is_async else self.sync_call

    def _call_async(self, *inputs: Any) -> Any:
        """The call of a program worth running on the async worker (async_dispatch.py):
        its results are PendingArrays at once; `inputs` may hold earlier calls' Results."""
        if not config.cpu_enable_async_dispatch or array_lib.layout_hook is not None:
            return self.sync_call(*async_dispatch.resolved(inputs))
        return tree_unflatten(self.out_tree, async_dispatch.submit(
            self.run.positional, inputs, self.out_avals))

    def call_pending(self, inputs: list) -> Any:
        """The call on buffers among which are pending Results: queued behind them when the
        program runs asynchronously, else run once they are ready."""
        if self.is_async is None:
            self._compile()
        if not self.is_async:
            inputs = async_dispatch.resolved(inputs)
        return self.call(*inputs)

    def _compile_and_run(self, buffers: list) -> list:
        self._compile()
        return self.run(buffers)

    def _compile_and_call(self, *buffers: np.ndarray) -> Any:
        self._compile()
        return self.call(*buffers)

    def _make_call_numpy(self, args: tuple, *buffers: np.ndarray) -> Any:
        if self.call == self._compile_and_call:
            self._compile()
        self.call_numpy = make_caller(self.run.positional, len(buffers), self.out_avals,
                                      self.out_tree, numpy_args=True)
        return self.call_numpy(args, *buffers)

    def place(self, leaves: list, results: list) -> list:
        """`results` laid out as sharding propagation decides from the arguments' layouts."""
        key = tuple(getattr(x, "_sharding", None) for x in leaves)
        shardings = self.placements.get(key, False)
        if shardings is False:
            shardings = self.placements[key] = output_shardings(self.jaxpr, list(key))
        if shardings is not None:
            results = [placed(r, s) if isinstance(r, ArrayImpl) else r
                       for r, s in zip(results, shardings)]
        if self.host_results:
            results = list(results)
            for i in self.host_results:
                if type(results[i]) is ArrayImpl and results[i]._sharding is None:
                    results[i] = placed(results[i], _host_sharding())
        return results


def _host_sharding() -> Any:
    """Where a result typed in host memory lives: the default device's pinned host memory."""
    from pyjax._src.parallel.devices import default_device
    return sharding_lib.SingleDeviceSharding(default_device(), memory_kind="pinned_host")


_caches: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
_cache_lock = threading.Lock()
_strong_caches: dict[Any, dict] = {}


def _cache_for(fun: Callable) -> dict:
    try:
        return _caches.setdefault(fun, {})
    except TypeError:  # not weak-referenceable
        return _strong_caches.setdefault(fun, {})


def _clear_function_caches() -> None:
    """Empty every function's cache in place (jitted wrappers keep their dict)."""
    for cache in [*_caches.values(), *_strong_caches.values()]:
        cache.clear()


caches.register(_clear_function_caches)


def _lift_tracer_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list]:
    """Turn constants that are tracers of outer traces into leading inputs of the jaxpr."""
    jaxpr = closed.jaxpr
    lifted = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if isinstance(c, Tracer)]
    if not lifted:
        return closed, []
    kept = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if not isinstance(c, Tracer)]
    new = Jaxpr([v for v, _ in kept], [v for v, _ in lifted] + jaxpr.invars, jaxpr.outvars,
                jaxpr.eqns, jaxpr.debug_info)
    return ClosedJaxpr(new, [c for _, c in kept]), [c for _, c in lifted]


# ---------------------------------------------------------------------------------------------
# The wrapper
# ---------------------------------------------------------------------------------------------

class PjitFunction:
    """What `jit(f)` returns: a callable with f's name and docstring.  Its type is named as
    JAX's is (libraries recognise jitted functions by it, e.g. chex's `is_traceable`)."""

    def __init__(self, fun: Callable, static_argnums: Sequence[int], static_argnames: Sequence[str],
                 inline: bool = False, donate_argnums: Sequence[int] = (),
                 donate_argnames: Sequence[str] = ()):
        self._fun = fun
        self._inline = inline
        self._donate = (frozenset(donate_argnums), frozenset(donate_argnames))  # for AOT stages
        self._static_argnums = frozenset(static_argnums)
        self._static_argnames = frozenset(static_argnames)
        self._has_static = bool(static_argnums or static_argnames)
        self._cache = _cache_for(fun)
        self._name = getattr(fun, "__name__", None) or getattr(
            getattr(fun, "func", None), "__name__", type(fun).__name__)
        functools.update_wrapper(self, fun, updated=())

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    @property
    def __signature__(self) -> inspect.Signature | None:
        """f's signature, as JAX's jitted functions report it (without it `inspect` takes this
        `__get__`-bearing object for a builtin method descriptor and finds no signature)."""
        try:
            return inspect.signature(self._fun)
        except (TypeError, ValueError):
            return None

    def _split(self, args: tuple, kwargs: dict) -> tuple[tuple, dict, tuple]:
        statics = []
        dyn_args = []
        for i, a in enumerate(args):
            if i in self._static_argnums or i - len(args) in self._static_argnums:
                statics.append((i, _hashable_static(a)))
            else:
                dyn_args.append(a)
        dyn_kwargs = {}
        for k, v in kwargs.items():
            if k in self._static_argnames:
                statics.append((k, _hashable_static(v)))
            else:
                dyn_kwargs[k] = v
        return tuple(dyn_args), dyn_kwargs, tuple(statics)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and not self._has_static and trace_state.trace is None:
            if (len(args) == 1 and type(args[0]) is ArrayImpl and not config_local.values
                    and not sharding_lib.placements_in_use and not _GLOBAL_OPTIONS["disable_jit"]
                    and not _GLOBAL_OPTIONS["no_execution"]):
                # the commonest call, `_call_arrays` of one Array under the process-wide
                # options with no Array laid out on a mesh, spelt out here (a frame less)
                buf = args[0]._buf
                entry = self._cache.get((1, config.global_trace_number, mesh_context_key(),
                                         (buf.shape, buf.dtype, args[0]._weak)))
                if entry is not None and len(self._cache) <= _REFRESH_AT:
                    return entry.call(buf)
            out = self._call_arrays(args)
            if out is not _MISS:
                return out
        if config.disable_jit:
            return self._fun(*args, **kwargs)
        if self._has_static:
            args_, kwargs_, statics = self._split(args, kwargs)
        else:
            args_, kwargs_, statics = args, kwargs, ()
        # Without keyword arguments only the positional tuple is flattened (the fast path);
        # the flag in the key keeps the two layouts apart.
        leaves, in_tree = tree_flatten((args_, kwargs_) if kwargs_ else args_)
        key = _cache_key(in_tree, bool(kwargs_), statics, leaves)
        entry = self._cache.get(key)
        if entry is not None:
            if len(self._cache) > _REFRESH_AT:  # near the bound: least recently used goes
                self._cache.pop(key, None)
                self._cache[key] = entry
        else:
            if config.no_tracing:  # jax.no_tracing(): a cache miss is an error (issue 13)
                raise RuntimeError(f"re-tracing function {fun_sourceinfo(self._fun)} for "
                                   "`jit`, but 'no_tracing' is set")
            entry, lifted = self._trace(args, kwargs, leaves, in_tree, bool(kwargs_), statics)
            if lifted:
                return tree_unflatten(entry.out_tree, self._bind(entry, [*lifted, *leaves]))
            with _cache_lock:  # other threads may be evicting too
                if len(self._cache) >= CACHE_SIZE:
                    self._cache.pop(next(iter(self._cache)), None)
                self._cache[key] = entry
        if trace_state.trace is None:
            if config.no_execution:  # jax.no_execution() (issue 13)
                raise RuntimeError(f"JAX tried to execute function jit({self._name}), but the "
                                   "no_execution config option is set")
            buffers = [_leaf_input(x) for x in leaves]
            if entry.is_async is None:
                entry._compile()
            if entry.is_async and not entry.lays_out and _async_leaves(leaves):
                return entry.call_pending(buffers)
            outs = _run(entry, async_dispatch.resolved(buffers))
            placed = False
            for x in leaves:  # outputs that are views of a caller's NumPy argument are copied
                if type(x) is not ArrayImpl:
                    outs = detach(outs, leaves, True)
                    break
                placed = placed or type(getattr(x, "_sharding", None)) is NamedSharding
            results = [wrap(b, a) for b, a in zip(outs, entry.out_avals)]
            if placed or entry.lays_out:  # over a mesh: so are the results (propagation.py)
                results = entry.place(leaves, results)
            return tree_unflatten(entry.out_tree, results)
        return tree_unflatten(entry.out_tree, self._bind(entry, leaves))

    def _call_arrays(self, args: tuple) -> Any:
        """The common call, made short: positional Arrays and NumPy arrays of canonical
        dtypes, outside any trace, a trace already cached, nothing laid out on a mesh, jit
        neither disabled nor forbidden to execute.  The cache key is the general path's;
        anything else answers _MISS (the general path)."""
        if config_local.values:  # this thread overrides options
            if config.disable_jit or config.no_execution:
                return _MISS
            options, canonical = config.trace_key(), _CANONICAL[config.x64]
        else:  # the process-wide options: read from their store, the trace options by number
            if _GLOBAL_OPTIONS["disable_jit"] or _GLOBAL_OPTIONS["no_execution"]:
                return _MISS
            options, canonical = config.global_trace_number, _CANONICAL[_GLOBAL_OPTIONS["x64"]]
        placed = sharding_lib.placements_in_use  # (else no Array has a placement to look for)
        sigs, buffers = [], []
        for x in args:
            if type(x) is not ArrayImpl or (placed and _keyed_placement(x._sharding)):
                return self._call_numpy(args, options, canonical)
            buf = x._buf
            sigs.append((buf.shape, buf.dtype, x._weak))
            buffers.append(buf)
        entry = self._cache.get((len(args), options, mesh_context_key(), *sigs))
        if entry is None or len(self._cache) > _REFRESH_AT or entry.lays_out:
            return _MISS  # (the general path renews recency and lays results out)
        return entry.call(*buffers)

    def _call_numpy(self, args: tuple, options: Any, canonical: dict) -> Any:
        """`_call_arrays` when some argument is a NumPy array (of a canonical dtype; the rest
        Arrays not laid out on a mesh): outputs that are views of a caller's array are
        copied; or an Array still being computed (async_dispatch.py), which the call takes
        as it is (queued behind it, or waiting for it when this program runs at once)."""
        sigs, buffers = [], []
        placed = sharding_lib.placements_in_use
        numpy = pending = False
        for x in args:
            t = type(x)
            if t is ArrayImpl:
                if placed and _keyed_placement(x._sharding):
                    return _MISS
                buf = x._buf
                sigs.append((buf.shape, buf.dtype, x._weak))
            elif t is PendingArray:  # (its Result while computing: never waited for here)
                buf = async_dispatch.pending_input(x)
                sigs.append((buf.shape, buf.dtype, x._weak))
                pending = True
            elif t is np.ndarray and canonical.get(x.dtype) is x.dtype:
                buf = x
                sigs.append((buf.shape, buf.dtype, False))
                numpy = True
            else:
                return _MISS
            buffers.append(buf)
        entry = self._cache.get((len(args), options, mesh_context_key(), *sigs))
        if entry is None or len(self._cache) > _REFRESH_AT or entry.lays_out:
            return _MISS
        if numpy:
            if pending:
                buffers = async_dispatch.resolved(buffers)
            return entry.call_numpy(args, *buffers)
        return entry.call_pending(buffers)

    def _bind(self, entry: _Entry, operands: list) -> list:
        """Under a trace: one jit equation, or with `inline=True` the body's equations in
        place (as JAX inlines such a jit when staging it)."""
        if self._inline:
            return eval_jaxpr(entry.jaxpr.jaxpr, entry.jaxpr.consts, *operands, fold=True)
        return jit_p.bind(*operands, jaxpr=entry.jaxpr, name=self._name)

    def _trace(self, args: tuple, kwargs: dict, leaves: list, in_tree: Any, has_kwargs: bool,
               statics: tuple) -> tuple[_Entry, list]:
        static_pos = {k: v.val for k, v in statics if isinstance(k, int)}
        out_tree_box = []

        def flat_fun(*flat: Any) -> list:
            structure = tree_unflatten(in_tree, flat)
            dyn_args, dyn_kwargs = structure if has_kwargs else (structure, {})
            it = iter(dyn_args)
            full = [static_pos[i] if i in static_pos else next(it) for i in range(len(args))]
            full_kwargs = dict(dyn_kwargs)
            full_kwargs.update((k, v.val) for k, v in statics if isinstance(k, str))
            out_leaves, out_tree = tree_flatten(self._fun(*full, **full_kwargs))
            out_tree_box.append(out_tree)
            return out_leaves

        debug = DebugInfo("jit", self._fun, args, kwargs, tuple(static_pos),
                          tuple(k for k, _ in statics if isinstance(k, str)))
        avals = [abstractify(x) for x in leaves]
        if trace_state.trace is None and monitoring.active():  # JAX's event, as JAX fires it
            with monitoring.timed(monitoring.JAXPR_TRACE_EVENT, self._name):
                closed = trace_to_jaxpr(flat_fun, avals, debug)
        else:
            closed = trace_to_jaxpr(flat_fun, avals, debug)
        closed, lifted = _lift_tracer_consts(closed)
        return _Entry(closed, out_tree_box[0], self._name), lifted

    def trace(self, *args: Any, **kwargs: Any) -> Any:
        """The Traced stage (`jax.stages.Traced`) for these arguments (the cached trace)."""
        from pyjax._src import stages
        args_, kwargs_, statics = self._split(args, kwargs)
        leaves, in_tree = tree_flatten((args_, kwargs_) if kwargs_ else args_)
        key = _cache_key(in_tree, bool(kwargs_), statics, leaves)
        entry = self._cache.get(key)
        if entry is None:
            entry, lifted = self._trace(args, kwargs, leaves, in_tree, bool(kwargs_), statics)
            with _cache_lock:
                if not lifted and len(self._cache) < CACHE_SIZE:
                    self._cache[key] = entry
        debug = DebugInfo("jit", self._fun, args, kwargs,
                          tuple(k for k, _ in statics if isinstance(k, int)),
                          tuple(k for k, _ in statics if isinstance(k, str)))
        return stages.make_traced(entry.jaxpr, entry.out_tree, args_, kwargs_,
                                  self._donated_leaves(len(args), args_, kwargs_),
                                  debug.arg_names(), self._name)

    def _donated_leaves(self, n_args: int, args_: tuple, kwargs_: dict) -> list[bool]:
        """Per leaf of (dynamic args, dynamic kwargs): whether donate_argnums/argnames name it."""
        nums, names = self._donate
        positions = [i for i in range(n_args) if i not in self._static_argnums
                     and i - n_args not in self._static_argnums]
        flags = [i in nums or i - n_args in nums for i in positions]
        flags += [k in names for k in sorted(kwargs_)]
        values = [*args_, *(kwargs_[k] for k in sorted(kwargs_))]
        return [flag for flag, v in zip(flags, values) for _ in tree_flatten(v)[0]]

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        """The Lowered stage for these arguments: `self.trace(*args, **kwargs).lower()`."""
        return self.trace(*args, **kwargs).lower()

    def clear_cache(self) -> None:
        self._cache.clear()

    def __repr__(self) -> str:
        return f"<PjitFunction of {self._fun!r}>"


_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _index_tuple(x: Any) -> tuple[int, ...]:
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(map(operator.index, x))


def _str_tuple(x: Any) -> tuple[str, ...]:
    if isinstance(x, str):
        return (x,)
    for name in x:
        if not isinstance(name, str):
            raise TypeError(f"argument is not a string: {name}")
    return tuple(x)


def _infer_nums_and_names(sig: inspect.Signature, nums: Any, names: Any
                          ) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Fill in argnames from argnums or vice versa (only positional-or-keyword parameters
    have both), as JAX does; when both are given they are taken as they are."""
    if nums is None and names is None:
        return (), ()
    if nums is not None and names is not None:
        return _index_tuple(nums), _str_tuple(names)
    params = list(sig.parameters.items())
    kw = inspect.Parameter.POSITIONAL_OR_KEYWORD
    if nums is None:
        names = _str_tuple(names)
        return tuple(i for i, (k, p) in enumerate(params) if p.kind == kw and k in names), names
    nums = _index_tuple(nums)
    return nums, tuple(k for i, (k, p) in enumerate(params) if p.kind == kw and i in nums)


def _validate_nums(sig: inspect.Signature, nums: tuple[int, ...], what: str) -> None:
    n_pos = 0
    for p in sig.parameters.values():
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            return  # any positive index may be passed through *args
        n_pos += p.kind in _POSITIONAL
    if nums and (-min(nums) > n_pos or max(nums) >= n_pos):
        raise ValueError(f"Jitted function has {what}={nums}, "
                         f"but only accepts {n_pos} positional arguments.")


def _validate_names(sig: inspect.Signature, names: tuple[str, ...], what: str) -> None:
    params = sig.parameters.values()
    positional_only = {p.name for p in params
                       if p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)}
    if bad := positional_only & set(names):
        raise ValueError(f"Jitted function has invalid argnames {bad} in {what}. "
                         "These are positional-only")
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return
    keyword = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    if bad := set(names) - keyword:
        raise ValueError(f"Jitted function has invalid argnames {bad} in {what}. "
                         "Function does not take these args.")


def _resolve_argnums(fun: Callable, static_argnums: Any, static_argnames: Any,
                     donate_argnums: Any, donate_argnames: Any
                     ) -> tuple[tuple[int, ...], tuple[str, ...], tuple[int, ...],
                                tuple[str, ...]]:
    """Static and donated argnums and argnames, each completed from the other via the
    signature and checked against it as JAX checks them when `jit` is applied."""
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):  # some builtins have none: nothing to check
        if donate_argnames is not None:
            raise ValueError(f"Getting the signature of function {fun} failed. "
                             "Pass donate_argnums instead of donate_argnames.") from None
        return (() if static_argnums is None else _index_tuple(static_argnums),
                () if static_argnames is None else _str_tuple(static_argnames),
                () if donate_argnums is None else _index_tuple(donate_argnums), ())
    nums, names = _infer_nums_and_names(sig, static_argnums, static_argnames)
    d_nums, d_names = _infer_nums_and_names(sig, donate_argnums, donate_argnames)
    _validate_nums(sig, nums, "static_argnums")
    _validate_names(sig, names, "static_argnames")
    _validate_nums(sig, d_nums, "donate_argnums")
    _validate_names(sig, d_names, "donate_argnames")
    if both := set(names) & set(d_names):
        raise ValueError("static_argnames and donate_argnames cannot intersect. Argument "
                         f"names {both} appear in both static_argnames and donate_argnames")
    return nums, names, d_nums, d_names


def jit(fun: Callable | None = None, *, static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None, donate_argnums: Any = None,
        donate_argnames: Any = None, inline: bool = False, keep_unused: bool = False,
        device: Any = None, backend: Any = None, in_shardings: Any = None,
        out_shardings: Any = None, abstracted_axes: Any = None,
        compiler_options: Any = None) -> Any:
    """Compile `fun`: trace it once per argument signature and reuse the compiled program."""
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                                 inline=inline, in_shardings=in_shardings,
                                 out_shardings=out_shardings)
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    nums, names, d_nums, d_names = _resolve_argnums(fun, static_argnums, static_argnames,
                                                    donate_argnums, donate_argnames)
    jitted = PjitFunction(fun, nums, names, inline, d_nums, d_names)
    if in_shardings is None and out_shardings is None:
        return jitted
    from pyjax._src.parallel.placement import ShardedJit  # shardings checked and applied
    return ShardedJit(jitted, in_shardings, out_shardings)
