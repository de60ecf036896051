"""Algebraic rewrites applied before a jaxpr is compiled, as XLA's simplifier does.

They change results only where XLA's do (log(exp(x)) is x under jit even where exp overflows),
so jit matches JAX numerically.  Rules are keyed by (outer primitive, producer primitive).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Literal, Var


def _half_literal(aval: ShapedArray, value: float) -> Literal:
    return Literal(np.asarray(value, aval.dtype), ShapedArray((), aval.dtype, False))


def _log_of_exp(eqn: Eqn, producer: Eqn) -> tuple[list[Eqn], Any]:
    """log(exp(x)) -> x."""
    return [], producer.invars[0]


def _log_of_sqrt(eqn: Eqn, producer: Eqn) -> tuple[list[Eqn], Any]:
    """log(sqrt(x)) -> 0.5 * log(x)."""
    from pyjax._src.primitives.elementwise import log_p, mul_p
    out = eqn.outvars[0]
    log_x = Var(out.aval)
    return [Eqn(log_p, [producer.invars[0]], [log_x], {}),
            Eqn(mul_p, [log_x, _half_literal(out.aval, 0.5)], [out], {})], out


def _log_of_rsqrt(eqn: Eqn, producer: Eqn) -> tuple[list[Eqn], Any]:
    """log(rsqrt(x)) -> -0.5 * log(x)."""
    from pyjax._src.primitives.elementwise import log_p, mul_p
    out = eqn.outvars[0]
    log_x = Var(out.aval)
    return [Eqn(log_p, [producer.invars[0]], [log_x], {}),
            Eqn(mul_p, [log_x, _half_literal(out.aval, -0.5)], [out], {})], out


_RULES: dict[tuple[str, str], Callable[[Eqn, Eqn], tuple[list[Eqn], Any]]] = {
    ("log", "exp"): _log_of_exp,
    ("log", "sqrt"): _log_of_sqrt,
    ("log", "rsqrt"): _log_of_rsqrt,
}


def simplify(closed: ClosedJaxpr) -> ClosedJaxpr:
    """A rewritten copy of `closed` (the same object when no rule applies)."""
    jaxpr = closed.jaxpr
    producers: dict[Var, Eqn] = {}
    renamed: dict[Any, Any] = {}
    eqns: list[Eqn] = []
    changed = False
    for eqn in jaxpr.eqns:
        invars = [renamed.get(a, a) if type(a) is Var else a for a in eqn.invars]
        if invars != eqn.invars:
            eqn = Eqn(eqn.primitive, invars, eqn.outvars, eqn.params, eqn.source_info)
        first = invars[0] if invars else None
        producer = producers.get(first) if type(first) is Var else None
        rule = _RULES.get((eqn.primitive.name, producer.primitive.name)) if producer else None
        if rule is not None:
            new_eqns, result = rule(eqn, producer)
            changed = True
            if result is not eqn.outvars[0]:
                renamed[eqn.outvars[0]] = result
            for new in new_eqns:
                eqns.append(new)
                producers.update((v, new) for v in new.outvars)
            continue
        eqns.append(eqn)
        producers.update((v, eqn) for v in eqn.outvars)
    if not changed:
        return closed
    outvars = [renamed.get(v, v) if type(v) is Var else v for v in jaxpr.outvars]
    return ClosedJaxpr(_drop_dead(Jaxpr(jaxpr.constvars, jaxpr.invars, outvars, eqns)),
                       closed.consts)


def _drop_dead(jaxpr: Jaxpr) -> Jaxpr:
    """Remove equations whose results nobody uses."""
    live = {v for v in jaxpr.outvars if type(v) is Var}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.outvars):
            kept.append(eqn)
            live.update(a for a in eqn.invars if type(a) is Var)
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, kept[::-1])
