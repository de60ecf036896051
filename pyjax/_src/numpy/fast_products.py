"""Eager fast path of jnp.dot, jnp.matmul and two-operand jnp.einsum (issue 16).

Called on two concrete arrays with no keyword arguments, each of these functions binds, for one
pair of operand types (shapes, dtypes, weak types) under one configuration, either exactly one
dot_general on its operands or something else.  That is worked out once per signature by
staging the function on the operand types (as jit traces it): when the jaxpr is that one
dot_general, later calls run its impl specialised to those types (`dot_general_p.specialize`:
for a plain 2-D product, NumPy's dot itself) straight on the buffers, under flushing as every
eager operation runs, and wrap the result with the jaxpr's dtype and weak type.  That is what
the eager plan of the call replays (backend/eager_plans.py), at about half its cost: the plan's
generic signature and replay cost more than a 10x10 product.  Any other call (tracers, keyword
arguments, other primitives, constants, warnings while staging, a mesh in context) takes the
usual path, which raises the function's own errors.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from pyjax._src import caches
from pyjax._src.backend.fp_mode import KEPT, SWITCHED, flush_off, flush_on
from pyjax._src.config import config
from pyjax._src.core import primitive
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.trace import trace_state, use_trace
from pyjax._src.parallel.mesh import context_key as mesh_context_key
from pyjax._src.primitives.dot import dot_general_p
from pyjax._src.transforms.staging import StagingTrace

#: (function, static args, operand types, config, mesh) -> (impl, swapped, dtype, weak), or
#: False when the call does not reduce to one dot_general of its operands, or _SEEN after one
#: call (the second is staged)
_steps: dict = {}
_SEEN = 0
_MAX_STEPS = 1024
caches.register(_steps.clear)


def fast_product(fun: Callable) -> Callable:
    """Decorate jnp.dot/matmul (`fun(a, b)`) or einsum (`fun(subscripts, a, b)`): eager calls
    of that form on two concrete arrays compute their one dot_general directly."""
    @functools.wraps(fun)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not kwargs and trace_state.trace is None:
            n = len(args)
            if ((n == 2 or n == 3 and type(args[0]) is str) and type(args[-1]) is ArrayImpl
                    and type(args[-2]) is ArrayImpl and (primitive.eager_layout is None or not (
                        primitive.lays_out(args[-1]) or primitive.lays_out(args[-2])))):
                out = _product(fun, args)
                if out is not None:
                    return out
        return fun(*args, **kwargs)
    return wrapper


def _product(fun: Callable, args: tuple) -> ArrayImpl | None:
    """fun(*args) by its cached step, or None when it has none."""
    a, b = args[-2], args[-1]
    ab, bb = a._buf, b._buf
    key = (fun, args[:-2], ab.shape, ab.dtype, a._weak, bb.shape, bb.dtype, b._weak,
           config.trace_key(), mesh_context_key())
    step = _steps.get(key)
    if not step:
        if step is None:  # first call: the usual path (one-off signatures are not staged)
            if len(_steps) >= _MAX_STEPS:
                _steps.clear()
            _steps[key] = _SEEN
            return None
        if step is not _SEEN:  # known not to reduce to one dot_general
            return None
        step = _steps[key] = _stage(fun, args[:-2], a, b)
        if not step:
            return None
    impl, swapped, dtype, weak = step
    if swapped:
        ab, bb = bb, ab
    if flush_on(KEPT) is not SWITCHED:
        out = impl(ab, bb)
    else:
        try:
            out = impl(ab, bb)
        finally:
            flush_off()
    if out.__class__ is not np.ndarray or out.dtype != dtype:  # as an eager plan checks
        out = np.asarray(out, dtype)
    return ArrayImpl(out, weak)


class _Staging(StagingTrace):
    """A staging trace that notes whether the function did more than bind primitives."""

    refused = False

    def side_effect(self) -> None:
        self.refused = True


def _stage(fun: Callable, static: tuple, a: ArrayImpl, b: ArrayImpl) -> tuple | bool:
    """The step of fun(*static, a, b) for these operand types: (dot_general's specialised
    impl, whether it takes the operands swapped, the result's dtype and weak type), or False
    unless its jaxpr is one dot_general of the two operands (and staging it neither fails nor
    does more than bind primitives, such as warn, and no mesh is in context)."""
    if mesh_context_key():
        return False
    trace = _Staging()
    x, y = (trace.new_arg(ShapedArray(v._buf.shape, v._buf.dtype, v._weak)) for v in (a, b))
    try:
        with use_trace(trace):
            out = fun(*static, x, y)
        closed = trace.to_closed_jaxpr([out])
    except Exception:  # noqa: BLE001 - the usual path raises the function's own error
        return False
    finally:
        trace.finish()
    jaxpr = closed.jaxpr
    if trace.refused or closed.consts or len(jaxpr.eqns) != 1:
        return False
    eqn = jaxpr.eqns[0]
    operands = list(eqn.invars)
    if (eqn.primitive is not dot_general_p or jaxpr.outvars[0] is not eqn.outvars[0]
            or operands not in ([x.jaxpr_var, y.jaxpr_var], [y.jaxpr_var, x.jaxpr_var])):
        return False
    impl = dot_general_p.specialize(*(v.aval for v in operands), **eqn.params)
    result = eqn.outvars[0].aval
    return impl, operands[0] is y.jaxpr_var, result.dtype, result.weak_type
