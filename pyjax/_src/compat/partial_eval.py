"""`jax.interpreters.partial_eval` over pyjax's partial evaluation (transforms/ad.py) and
staging (transforms/staging.py)."""
from __future__ import annotations

from typing import Any, Sequence

from pyjax._src.compat.linear_util import WrappedFun
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import Jaxpr, dce
from pyjax._src.core.trace import trace_state, use_trace
from pyjax._src.transforms.ad import PartialEvalTrace
from pyjax._src.transforms.staging import DynamicJaxprTracer, trace_to_jaxpr  # noqa: F401


class PartialVal(tuple):
    """A value known now (`PartialVal.known(x)`) or only by its aval (`.unknown(aval)`)."""

    def __new__(cls, xs: tuple) -> "PartialVal":
        return tuple.__new__(cls, xs)

    @classmethod
    def known(cls, const: Any) -> "PartialVal":
        return cls((None, const))

    @classmethod
    def unknown(cls, aval: ShapedArray) -> "PartialVal":
        return cls((aval, None))

    def is_known(self) -> bool:
        return self[0] is None

    def get_known(self) -> Any:
        return self[1] if self[0] is None else None

    def get_aval(self) -> ShapedArray:
        from pyjax._src.transforms.staging import abstractify
        return abstractify(self[1]) if self[0] is None else self[0]


def trace_to_jaxpr_nounits(fun: WrappedFun, pvals: Sequence[PartialVal],
                           instantiate: bool | Sequence[bool] = False
                           ) -> tuple[Jaxpr, list[PartialVal], list[Any]]:
    """Compute what the known inputs determine now; stage the rest into a jaxpr over the
    unknown inputs (its constvars are the known values it reads, returned as consts)."""
    pe = PartialEvalTrace(trace_state.trace)
    args = [pv.get_known() if pv.is_known() else pe.new_unknown(pv.get_aval()) for pv in pvals]
    try:
        with use_trace(pe):
            outs = fun.call_wrapped(*args)
        if isinstance(instantiate, bool):
            instantiate = [instantiate] * len(outs)
        out_pvals, outvars = [], []
        for out, inst in zip(outs, instantiate):
            if pe.is_unknown(out) or inst:
                atom = out.jaxpr_var if pe.is_unknown(out) else pe.staging.to_atom(out)
                outvars.append(atom)
                out_pvals.append(PartialVal.unknown(atom.aval))
            else:
                out_pvals.append(PartialVal.known(out))
        staging = pe.staging
        jaxpr = Jaxpr(list(staging.constvars), list(staging.invars), outvars, list(staging.eqns))
        consts = list(staging.const_values)
    finally:
        pe.finish()
    return jaxpr, out_pvals, consts


def trace_to_jaxpr_dynamic(fun: WrappedFun, in_avals: Sequence[ShapedArray], *_: Any,
                           **__: Any) -> tuple[Jaxpr, list[ShapedArray], list[Any]]:
    """Stage `fun` on abstract inputs: (jaxpr with constvars, output avals, constants)."""
    closed = trace_to_jaxpr(fun.call_wrapped, in_avals)
    return closed.jaxpr, closed.out_avals, closed.consts


def dce_jaxpr(jaxpr: Jaxpr, used_outputs: Sequence[bool], instantiate: bool | Sequence[bool]
              = False) -> tuple[Jaxpr, list[bool]]:
    """Drop unused outputs and the equations only they need; unused inputs are removed
    unless `instantiate` keeps them. Returns the jaxpr and which inputs it still reads."""
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(jaxpr.invars)
    pruned, used_inputs = dce(jaxpr, used_outputs)
    keep = [u or bool(i) for u, i in zip(used_inputs, instantiate)]
    invars = [v for v, k in zip(jaxpr.invars, keep) if k]
    return Jaxpr(pruned.constvars, invars, pruned.outvars, pruned.eqns, pruned.debug_info), keep


__all__ = ["DynamicJaxprTracer", "PartialVal", "dce_jaxpr", "trace_to_jaxpr_dynamic",
           "trace_to_jaxpr_nounits"]
