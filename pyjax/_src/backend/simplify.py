"""Algebraic rewrites applied before a jaxpr is compiled, as XLA's simplifier does.

They change results only where XLA's do (log(exp(x)) is x under jit even where exp overflows;
x / c is x * (1/c) for a constant float c), so jit matches JAX numerically.  Each rule looks at
one equation, the equations that produced its operands, and which operands are constants, and
returns replacement equations plus the atom now holding the result, or None.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from pyjax._src.backend.dispatch import to_buffer
from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, has_effects

Rewrite = tuple[list[Eqn], Any] | None


def _literal(value: Any, dtype: np.dtype) -> Literal:
    return Literal(np.asarray(value, dtype), ShapedArray((), dtype, False))


def _scaled_log(eqn: Eqn, x: Any, scale: float) -> Rewrite:
    """scale * log(x), replacing eqn."""
    from pyjax._src.primitives.elementwise import log_p, mul_p
    out = eqn.outvars[0]
    log_x = Var(out.aval)
    return [Eqn(log_p, [x], [log_x], {}),
            Eqn(mul_p, [log_x, _literal(scale, out.aval.dtype)], [out], {})], out


def _log_rule(eqn: Eqn, producer: Eqn | None, consts: dict) -> Rewrite:
    """log(exp(x)) -> x; log(sqrt(x)) -> 0.5 log(x); log(rsqrt(x)) -> -0.5 log(x)."""
    name = producer.primitive.name if producer is not None else None
    if name == "exp":
        return [], producer.invars[0]
    if name == "sqrt":
        return _scaled_log(eqn, producer.invars[0], 0.5)
    if name == "rsqrt":
        return _scaled_log(eqn, producer.invars[0], -0.5)
    return None


def _div_rule(eqn: Eqn, producer: Eqn | None, consts: dict) -> Rewrite:
    """x / c -> x * (1/c) for a constant floating-point c."""
    from pyjax._src.primitives.elementwise import mul_p
    divisor = eqn.invars[1]
    dtype = eqn.outvars[0].aval.dtype
    if not dtypes.is_float(dtype):
        return None
    if type(divisor) is Literal:
        value = divisor.val
    elif divisor in consts:
        value = consts[divisor]
    else:
        return None
    with np.errstate(all="ignore"):
        reciprocal = np.asarray(np.asarray(1, dtype) / np.asarray(value, dtype), dtype)
    if reciprocal.ndim == 0:
        atom = Literal(reciprocal, ShapedArray((), dtype, False))
    else:
        atom = Var(ShapedArray(reciprocal.shape, dtype, False))
        consts[atom] = reciprocal
    return [Eqn(mul_p, [eqn.invars[0], atom], eqn.outvars, {})], eqn.outvars[0]


_RULES: dict[str, Callable[[Eqn, Eqn | None, dict], Rewrite]] = {
    "log": _log_rule,
    "div": _div_rule,
}


def simplify(closed: ClosedJaxpr) -> ClosedJaxpr:
    """A rewritten copy of `closed` (the same object when no rule applies)."""
    jaxpr = closed.jaxpr
    consts = {v: to_buffer(c)[0] for v, c in zip(jaxpr.constvars, closed.consts)
              if not hasattr(c, "_trace")}
    producers: dict[Var, Eqn] = {}
    renamed: dict[Any, Any] = {}
    eqns: list[Eqn] = []
    changed = False
    for eqn in jaxpr.eqns:
        invars = [renamed.get(a, a) if type(a) is Var else a for a in eqn.invars]
        if invars != eqn.invars:
            eqn = Eqn(eqn.primitive, invars, eqn.outvars, eqn.params, eqn.source_info)
        rule = _RULES.get(eqn.primitive.name)
        first = invars[0] if invars else None
        rewrite = rule(eqn, producers.get(first) if type(first) is Var else None, consts) \
            if rule is not None else None
        if rewrite is None:
            eqns.append(eqn)
            producers.update((v, eqn) for v in eqn.outvars)
            continue
        new_eqns, result = rewrite
        changed = True
        if result is not eqn.outvars[0]:
            renamed[eqn.outvars[0]] = result
        for new in new_eqns:
            eqns.append(new)
            producers.update((v, new) for v in new.outvars)
    if not changed:
        pruned = _drop_dead(jaxpr)
        return closed if len(pruned.eqns) == len(jaxpr.eqns) else \
            ClosedJaxpr(pruned, closed.consts)
    outvars = [renamed.get(v, v) if type(v) is Var else v for v in jaxpr.outvars]
    new_constvars = [v for v in consts if v not in jaxpr.constvars]
    jaxpr = Jaxpr(jaxpr.constvars + new_constvars, jaxpr.invars, outvars, eqns)
    return ClosedJaxpr(_drop_dead(jaxpr),
                       list(closed.consts) + [consts[v] for v in new_constvars])


def _drop_dead(jaxpr: Jaxpr) -> Jaxpr:
    """Remove equations whose results nobody uses (as XLA does: a primal computed inside a
    jitted grad and never read costs nothing), keeping those with effects (jaxpr.has_effects)."""
    live = {v for v in jaxpr.outvars if type(v) is Var}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.outvars) or has_effects(eqn):
            kept.append(eqn)
            live.update(a for a in eqn.invars if type(a) is Var)
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, kept[::-1])
