"""Stage 1 of the jit compiler: passes over the traced jaxpr, before the fusion plan.

XLA's algebraic simplifications and dead-code removal (simplify.py), whose rewrites decide
rounding (fused multiply-adds, x/c as x*(1/c)), so jit matches JAX's numbers; then key-typed
values become their uint32 key data (random/physical.py), as JAX lowers keys; then nested jit
calls are inlined, each body optimised on its own first, exactly as it ran as a call (no
rewrite crosses the boundary), so that fusion sees through them.  Last, an iota over
several axes becomes its one counting line broadcast into the shape, so a fused kernel reads
(cholesky's tril mask) a short row or column instead of a whole strided view.
"""
from __future__ import annotations

from typing import Any, Callable

from pyjax._src.backend.simplify import simplify
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr, DropVar, Eqn, Jaxpr, Var, has_effects


def inline_calls(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Nested `jit` equations without effects replaced by their optimised bodies."""
    jaxpr = closed.jaxpr
    if not any(e.primitive.name == "jit" and not has_effects(e) for e in jaxpr.eqns):
        return closed
    constvars, consts = list(jaxpr.constvars), list(closed.consts)
    renamed: dict = {}
    eqns: list[Eqn] = []

    def sub(a: Any) -> Any:
        return renamed.get(a, a) if type(a) is Var else a

    for eqn in jaxpr.eqns:
        invars = [sub(a) for a in eqn.invars]
        if eqn.primitive.name != "jit" or has_effects(eqn):
            eqns.append(eqn if invars == eqn.invars else
                        Eqn(eqn.primitive, invars, eqn.outvars, eqn.params, eqn.source_info))
            continue
        body = optimize(eqn.params["jaxpr"])
        inner: dict = dict(zip(body.jaxpr.invars, invars))
        for v, c in zip(body.jaxpr.constvars, body.consts):
            inner[v] = Var(v.aval)
            constvars.append(inner[v])
            consts.append(c)
        for e in body.jaxpr.eqns:  # fresh variables: one body may be inlined twice
            outs = [v if isinstance(v, DropVar) else Var(v.aval) for v in e.outvars]
            inner.update(zip(e.outvars, outs))
            eqns.append(Eqn(e.primitive, [inner.get(a, a) if type(a) is Var else a
                                          for a in e.invars], outs, e.params, e.source_info))
        for v, out in zip(eqn.outvars, body.jaxpr.outvars):
            renamed[v] = inner.get(out, out) if type(out) is Var else out
    outvars = [sub(v) for v in jaxpr.outvars]
    return ClosedJaxpr(Jaxpr(constvars, jaxpr.invars, outvars, eqns), consts)


def iota_lines(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Each iota of rank 2 or more as broadcast_in_dim of a rank-1 iota along its dimension
    (the same values; fusion takes the broadcast into a cluster as a row or column)."""
    jaxpr = closed.jaxpr
    if not any(e.primitive.name == "iota" and len(e.params["shape"]) > 1 for e in jaxpr.eqns):
        return closed
    from pyjax._src.primitives.shape import broadcast_in_dim_p
    eqns: list[Eqn] = []
    for e in jaxpr.eqns:
        if e.primitive.name != "iota" or len(e.params["shape"]) < 2:
            eqns.append(e)
            continue
        shape, d = e.params["shape"], e.params["dimension"]
        dtype = e.outvars[0].aval.dtype
        line = Var(ShapedArray((shape[d],), dtype, False))
        eqns.append(Eqn(e.primitive, [], [line],
                        {**e.params, "shape": (shape[d],), "dimension": 0}, e.source_info))
        eqns.append(Eqn(broadcast_in_dim_p, [line], e.outvars,
                        {"shape": shape, "broadcast_dimensions": (d,), "sharding": None},
                        e.source_info))
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns,
                             jaxpr.debug_info), closed.consts)


def key_data(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Key-typed values as their key data (random/physical.py)."""
    from pyjax._src.random.physical import physicalize
    return physicalize(closed)


#: (name, pass) in the order they run
PASSES: tuple[tuple[str, Callable[[ClosedJaxpr], ClosedJaxpr]], ...] = (
    ("algebraic rewrites and dead code", simplify),
    ("key arrays as their key data", key_data),
    ("inline nested jit calls", inline_calls),
    ("iota as a broadcast line", iota_lines),
)


def optimize(closed: ClosedJaxpr) -> ClosedJaxpr:
    """The jaxpr the backend compiles (what `Lowered.as_text()` prints)."""
    for _, run in PASSES:
        closed = run(closed)
    return closed
