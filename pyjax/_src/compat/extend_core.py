"""`jax.extend.core` mapped onto pyjax's core: the Primitive that libraries define their own
operations with, the jaxpr classes, and the queries about the current trace.

A library primitive's impl (`def_impl`) receives and returns arrays, as in JAX; pyjax's own
impls work on NumPy buffers, so the Primitive here adapts the one to the other.  pyjax has no
MLIR: a lowering registered with `mlir.lower_fun(fun)` is what runs the primitive under jit.
"""
from __future__ import annotations

import weakref
from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.backend.dispatch import to_buffer
from pyjax._src.errors import InconclusiveDimensionOperation, JaxprTypeError  # noqa: F401
from pyjax._src.core import primitive as _primitive
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.effects import Effect
from pyjax._src.core.jaxpr import (  # noqa: F401  (re-exported)
    ClosedJaxpr, DropVar, Eqn, Jaxpr, Literal, Var, jaxprs_in_params)
from pyjax._src.core.trace import trace_state, use_trace
from pyjax._src.compat.core import concrete_or_error, eval_jaxpr, valid_jaxtype  # noqa: F401

JaxprEqn = Eqn
Effects = set
no_effects: frozenset = frozenset()
array_types = {np.ndarray, ArrayImpl}


class Primitive(_primitive.Primitive):
    """JAX's `Primitive(name)` with `def_impl`, `def_abstract_eval`,
    `def_effectful_abstract_eval`; `multiple_results` may be set after creation."""

    census = False  # a library's primitive, not one of pyjax's own

    def __init__(self, name: str):
        super().__init__(name)
        self.impl = self._missing_impl

    def _missing_impl(self, *buffers: Any, **params: Any) -> Any:
        raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented")

    def def_impl(self, impl: Callable) -> Callable:
        """impl(*arrays, **params): runs eagerly with the operands as bound (JAX's eval
        trace) and, unless a lowering was registered, under jit on the operand arrays."""
        self.eager = lambda prim, args, params: impl(*args, **params)
        if not getattr(self.impl, "lowered", False):
            self.impl = on_buffers(impl, self)
        return impl

    def def_abstract_eval(self, rule: Callable) -> Callable:
        """rule(*avals, **params) -> aval (or a list of avals with multiple_results)."""
        self.abstract_eval = rule
        return rule

    def def_effectful_abstract_eval(self, rule: Callable) -> Callable:
        """rule(*avals, **params) -> (aval(s), effects); a primitive that reports effects is
        never removed as dead code."""
        def abstract_eval(*avals: Any, **params: Any) -> Any:
            out, effects = rule(*avals, **params)
            if effects:
                self.effectful = True
            return out
        self.abstract_eval = abstract_eval
        return rule

    def bind_with_trace(self, trace: Any, args: Sequence[Any], params: dict) -> Any:
        with use_trace(trace):
            return self.bind(*args, **params)


def on_buffers(fun: Callable, prim: _primitive.Primitive) -> Callable:
    """`fun` over arrays as a pyjax impl over NumPy buffers (what jit's executor calls)."""
    def impl(*buffers: Any, **params: Any) -> Any:
        arrays = [ArrayImpl(b, False) if isinstance(b, np.ndarray) else b for b in buffers]
        with use_trace(None):
            out = fun(*arrays, **params)
        if prim.multiple_results:
            return [to_buffer(o)[0] for o in out]
        return to_buffer(out)[0]
    impl.__name__ = getattr(fun, "__name__", prim.name)
    return impl


class CallPrimitive(Primitive):
    """A primitive whose `call_jaxpr` param is evaluated as its implementation."""

    def __init__(self, name: str):
        super().__init__(name)
        self.multiple_results = True
        self.def_impl(call_impl)


def call_impl(*args: Any, call_jaxpr: Any, **_: Any) -> list:
    jaxpr = call_jaxpr.jaxpr if isinstance(call_jaxpr, ClosedJaxpr) else call_jaxpr
    consts = call_jaxpr.consts if isinstance(call_jaxpr, ClosedJaxpr) else []
    return eval_jaxpr(jaxpr, consts, *args)


class OpaqueTraceState:
    """Compares equal exactly when taken under the same trace (libraries use it to notice
    that a transformation started or ended since an object was created)."""

    __slots__ = ("_ref",)

    def __init__(self, trace: Any):
        self._ref = weakref.ref(trace) if trace is not None else None

    def _trace(self) -> Any:
        return None if self._ref is None else self._ref()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OpaqueTraceState) and self._ref == other._ref

    def __hash__(self) -> int:
        return hash(self._ref)


def get_opaque_trace_state(convention: Any = None) -> OpaqueTraceState:
    """A token of the current trace (the eager context is a trace too)."""
    return OpaqueTraceState(trace_state.trace)


def find_top_trace(_: Any) -> Any:
    """The current trace (None when evaluating eagerly): pyjax, like JAX 0.10, keeps one
    current trace rather than a stack to search."""
    return trace_state.trace


def _trace_chain(trace: Any) -> list:
    chain = []
    while trace is not None:
        chain.append(type(trace).__name__)
        trace = getattr(trace, "parent", None)
    return chain


def unsafe_am_i_under_a_jit_DO_NOT_USE() -> bool:  # noqa: N802 - JAX's name
    return "StagingTrace" in _trace_chain(trace_state.trace)


def unsafe_am_i_under_a_vmap_DO_NOT_USE() -> bool:  # noqa: N802 - JAX's name
    return "BatchTrace" in _trace_chain(trace_state.trace)


def unsafe_get_axis_names_DO_NOT_USE() -> list:  # noqa: N802 - JAX's name
    """Names of the vmap/pmap axes in scope, outermost first."""
    names, trace = [], trace_state.trace
    while trace is not None:
        name = getattr(trace, "axis_name", None)
        if name is not None:
            names.append(name)
        trace = getattr(trace, "parent", None)
    return names[::-1]


def nonempty_axis_env_DO_NOT_USE() -> bool:  # noqa: N802 - JAX's name
    return bool(unsafe_get_axis_names_DO_NOT_USE())


def mapped_aval(size: int, axis: int | None, aval: ShapedArray) -> ShapedArray:
    """`aval` with its mapped axis removed (JAX's argument order: size, axis, aval)."""
    if axis is None:
        return aval
    if aval.shape[axis] != size:
        raise ValueError(f"axis {axis} of {aval} has size {aval.shape[axis]}, not {size}")
    shape = aval.shape[:axis] + aval.shape[axis + 1:]
    return ShapedArray(shape, aval.dtype, aval.weak_type)


def unmapped_aval(size: int, axis: int | None, aval: ShapedArray,
                  explicit_mesh_axis: Any = None) -> ShapedArray:
    """`aval` with a mapped axis of `size` inserted at `axis` (None: unchanged)."""
    from pyjax._src.transforms.batching import unmapped_aval as insert_axis
    return aval if axis is None else insert_axis(aval, size, axis)


def subjaxprs(jaxpr: Jaxpr) -> list[Jaxpr]:
    """The jaxprs held by the equations' params (one level deep)."""
    return [sub for eqn in jaxpr.eqns for sub in jaxprs_in_params(eqn.params)]


def jaxpr_as_fun(closed: ClosedJaxpr, *args: Any) -> Any:
    """`closed` as a function of its inputs (called at once when given arguments)."""
    fun = lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs)  # noqa: E731
    return fun(*args) if args else fun


def new_jaxpr_eqn(invars: list, outvars: list, primitive: Any, params: dict,
                  effects: Any = None, source_info: Any = None, ctx: Any = None) -> Eqn:
    return Eqn(primitive, list(invars), list(outvars), dict(params), source_info)


def gensym(suffix: str = "") -> Callable[[ShapedArray], Var]:
    """A maker of fresh variables (names are chosen when a jaxpr is printed)."""
    return Var


def primal_dtype_to_tangent_dtype(dtype: Any) -> Any:
    """Tangents of integers and booleans are float0, as in JAX (ShapedArray's rule)."""
    return ShapedArray((), dtype).to_tangent_aval().dtype


def check_jaxpr(jaxpr: Jaxpr) -> None:
    """Type-check `jaxpr`, raising JaxprTypeError (pyjax's checker)."""
    from pyjax._src.core.check import check_jaxpr as check
    check(jaxpr)


def set_current_trace(trace: Any) -> use_trace:
    """A context in which `trace` is current (None: eager)."""
    return use_trace(trace)


class take_current_trace:  # noqa: N801 - JAX's name
    """A context yielding the current trace while making evaluation eager inside it."""

    def __enter__(self) -> Any:
        self._ctx = use_trace(None)
        trace = trace_state.trace
        self._ctx.__enter__()
        return trace

    def __exit__(self, *exc: Any) -> None:
        self._ctx.__exit__(*exc)


class TraceTag:
    """An identity token distinguishing one transformation from another."""


class DebugInfo:
    """JAX's record of what a jaxpr was traced for (arguments' and results' names)."""

    def __init__(self, traced_for: str, func_src_info: str | None,
                 arg_names: Sequence[str] | None, result_paths: Any = None):
        self.traced_for, self.func_src_info = traced_for, func_src_info
        self.arg_names, self.result_paths = arg_names, result_paths

    @property
    def func_name(self) -> str:
        return (self.func_src_info or "<unknown>").split(" ")[0]

    def __repr__(self) -> str:
        return (f"DebugInfo(traced_for={self.traced_for!r}, func_src_info="
                f"{self.func_src_info!r}, arg_names={self.arg_names!r})")


primitives = _primitive.registry

__all__ = [
    "CallPrimitive", "ClosedJaxpr", "DebugInfo", "DropVar", "Effect", "Effects",
    "InconclusiveDimensionOperation", "Jaxpr", "JaxprEqn", "JaxprTypeError", "Literal",
    "Primitive", "TraceTag", "Var", "array_types", "call_impl", "check_jaxpr",
    "concrete_or_error", "find_top_trace", "gensym", "get_opaque_trace_state", "jaxpr_as_fun",
    "jaxprs_in_params", "mapped_aval", "new_jaxpr_eqn", "no_effects",
    "nonempty_axis_env_DO_NOT_USE", "primal_dtype_to_tangent_dtype", "primitives",
    "set_current_trace", "subjaxprs", "take_current_trace", "unmapped_aval",
    "unsafe_am_i_under_a_jit_DO_NOT_USE", "unsafe_am_i_under_a_vmap_DO_NOT_USE",
    "unsafe_get_axis_names_DO_NOT_USE", "valid_jaxtype"]
