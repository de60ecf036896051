"""`HiPrimitive`: an operation on hijax values, defined by its lowering to ordinary values.

Binding one follows JAX: with no transformation the primitive runs its `to_lojax` rule on the
values themselves; while staging (jit, make_jaxpr) it is recorded as an equation whose abstract
rule sees mutable operands with their current QDD (and may update it); under jvp its `jvp`
rule runs.  A jit-compiled equation runs `to_lojax` on the values of that run.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pyjax._src.backend.dispatch import to_buffer
from pyjax._src.core.array import Array, ArrayImpl
from pyjax._src.core.jaxpr import Eqn, Var
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.source_info import user_frames
from pyjax._src.core.trace import trace_state, use_trace
from pyjax._src.hijax.types import AvalMutableQDD, AvalQDD, MutableQuasiDynamicData, qdd_table


class HiPrimitive(Primitive):
    """Subclasses define `abstract_eval` (returning (avals, effects)), `to_lojax`, and for
    autodiff `jvp` and `transpose`; `multiple_results` is a class attribute."""

    census = False
    multiple_results = False

    def __init__(self, name: str):
        self.name = name
        self.impl = self._run_lowered  # what a compiled equation runs
        self.eager = lambda prim, args, params: prim.to_lojax(*args, **params)
        self.abstract_eval = self._abstract_eval_without_qdd
        self.batch = self.batch_collective = self.lowering = None
        self.pp_rule = self.partial_eval = self.const_fold = None
        self.effectful = True  # writes to mutable values must never be dropped or merged

    def is_high(self, *avals: Any, **params: Any) -> bool:
        return True

    def is_effectful(self, params: dict) -> bool:
        return False

    def bind(self, *args: Any, **params: Any) -> Any:
        trace = trace_state.trace
        if trace is None:
            return self.to_lojax(*args, **params)
        from pyjax._src.transforms.staging import StagingTrace
        if type(trace) is StagingTrace:
            return _stage(trace, self, args, params)
        return trace.process_primitive(self, args, params)

    def to_lojax(self, *args: Any, **params: Any) -> Any:
        raise NotImplementedError(
            f"Primitive '{self.name}' has is_high=True but no to_lojax lowering rule.")

    def jvp(self, primals: Any, tangents: Any, **params: Any) -> Any:
        raise NotImplementedError(f"Differentiation rule for '{self.name}' not implemented")

    def transpose(self, *args: Any, **params: Any) -> Any:
        raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                  f"'{self.name}' not implemented")

    def _abstract_eval_without_qdd(self, *avals: Any, **params: Any) -> Any:
        """The abstract rule as transformations other than staging call it (no QDD known)."""
        avals = [AvalMutableQDD(a, MutableQuasiDynamicData(None))
                 if getattr(a, "has_qdd", False) else a for a in avals]
        out, _ = type(self).abstract_eval(self, *avals, **params)
        unwrap = lambda a: a.aval if isinstance(a, AvalQDD) else a  # noqa: E731
        return [unwrap(a) for a in out] if self.multiple_results else unwrap(out)

    def _run_lowered(self, *values: Any, **params: Any) -> Any:
        arrays = [ArrayImpl(v, False) if isinstance(v, np.ndarray) else v for v in values]
        with use_trace(None):
            out = self.to_lojax(*arrays, **params)
        if self.multiple_results:
            return [_as_buffer(o) for o in out]
        return _as_buffer(out)


def _as_buffer(x: Any) -> Any:
    return to_buffer(x)[0] if isinstance(x, Array) else x


def _stage(trace: Any, prim: HiPrimitive, args: tuple, params: dict) -> Any:
    """Record `prim` as an equation; mutable operands' QDD is read and updated in the trace."""
    from pyjax._src.transforms.staging import DynamicJaxprTracer
    table = qdd_table(trace)
    atoms = [trace.to_atom(x) for x in args]
    in_avals = [AvalMutableQDD(a.aval, table[a]) if getattr(a.aval, "has_qdd", False)
                and a in table else a.aval for a in atoms]
    out, _effects = type(prim).abstract_eval(prim, *in_avals, **params)
    outvars = []
    for aval in (out if prim.multiple_results else [out]):
        if isinstance(aval, AvalQDD):
            var = Var(aval.aval)
            table[var] = MutableQuasiDynamicData(aval.qdd)
        else:
            var = Var(aval)
        outvars.append(var)
    trace.eqns.append(Eqn(prim, atoms, outvars, params, user_frames()))
    tracers = [DynamicJaxprTracer(trace, v) for v in outvars]
    return tracers if prim.multiple_results else tracers[0]
