"""Forward and reverse mode, the JAX way: jvp, linearize (jvp + partial evaluation), transpose.

- `JVPTrace`: tangents ride with primals; a primitive's `jvp` rule runs under the parent trace,
  written with lax functions so it is itself differentiable.  `Zero` is a symbolic zero tangent.
- `PartialEvalTrace`: values are known (computed now, under the parent) or unknown (staged into
  a linear jaxpr).  linearize = jvp with known primals and unknown tangents.
- `backward_pass`: walks a linear jaxpr backwards, each linear primitive's `transpose` rule
  mapping output cotangents to input cotangents, accumulated with `add_any`.

Rule signatures (attributes of each Primitive):
    jvp(primals, tangents, **params) -> (primal_out, tangent_out)   tangents may be Zero
    transpose(ct, *args, **params) -> [ct per arg]   linear args are UndefinedPrimal; ct may be Zero
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from pyjax._src.core import dtypes
from pyjax._src.core.array import ArrayImpl
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var, dce, eval_jaxpr
from pyjax._src.core.primitive import Primitive
from pyjax._src.parallel import propagation
from pyjax._src.core.trace import Trace, Tracer, check_alive, trace_state, use_trace
from pyjax._src.primitives._rules import NUMBER, check_kinds, make_primitive
from pyjax._src.transforms.staging import DynamicJaxprTracer, StagingTrace, abstractify


# ---------------------------------------------------------------------------------------------
# Symbolic zeros, undefined primals, tangent types
# ---------------------------------------------------------------------------------------------

def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """Tangents of integer and boolean values have dtype float0, as in JAX (the aval's own
    `to_tangent_aval`, so that other abstract values, such as hijax types, define theirs)."""
    return aval.to_tangent_aval()


class Zero:
    """A tangent or cotangent known to be zero: costs nothing until instantiated."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    @staticmethod
    def like(x: Any) -> "Zero":
        return Zero(tangent_aval(abstractify(x)))

    def __repr__(self) -> str:
        return f"Zero({self.aval})"


class UndefinedPrimal:
    """Marks a linear input of a transpose rule: only its aval is known."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval})"


def is_undefined(x: Any) -> bool:
    return type(x) is UndefinedPrimal


def zeros_like_aval(aval: ShapedArray) -> Any:
    """A concrete (or staged) array of zeros of `aval` (float0 zeros are NumPy structs)."""
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    from pyjax._src.primitives.shape import broadcast_in_dim
    zero = ArrayImpl(np.zeros((), aval.dtype), aval.weak_type)  # weak stays weak, as in JAX
    return broadcast_in_dim(zero, aval.shape, ()) if aval.shape else zero


def instantiate(t: Any) -> Any:
    """A Zero as an actual array of zeros; anything else unchanged."""
    return zeros_like_aval(t.aval) if type(t) is Zero else t


def _add_any_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.add(x, y)


def _add_any_abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    if x.shape != y.shape or x.dtype != y.dtype:
        raise TypeError(f"add_any requires operands of one type, got {x.str_short()} and "
                        f"{y.str_short()}")
    check_kinds("add_any", NUMBER, x)
    return ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type)


#: Sum of two tangents or cotangents (the accumulation primitive of reverse mode).
add_any_p = make_primitive("add_any", _add_any_impl, _add_any_abstract)


def add_tangents(x: Any, y: Any) -> Any:
    """x + y where either may be a symbolic Zero."""
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return add_any_p.bind(x, y)


add_any_p.jvp = lambda primals, tangents: (
    add_any_p.bind(*primals), add_tangents(*tangents))
add_any_p.transpose = lambda ct, x, y: [ct if is_undefined(x) else None,
                                        ct if is_undefined(y) else None]


def _add_any_batch(vals: Sequence[Any], dims: Sequence[Any]) -> tuple:
    """JAX's add_batched: an unbatched operand is broadcast at the other's batch axis, and
    differing axes are matched by moving x's to y's."""
    from pyjax._src.transforms.batching import broadcast_batch, move_axis
    (x, y), (dx, dy) = vals, dims
    if dx == dy:
        return add_any_p.bind(x, y), dx
    if dx is None:
        return add_any_p.bind(broadcast_batch(x, np.shape(y)[dy], dy), y), dy
    if dy is None:
        return add_any_p.bind(x, broadcast_batch(y, np.shape(x)[dx], dx)), dx
    return add_any_p.bind(move_axis(x, dx, dy), y), dy


add_any_p.batch = _add_any_batch
add_any_p.sharding_rule = propagation.elementwise


# ---------------------------------------------------------------------------------------------
# Helpers to declare rules
# ---------------------------------------------------------------------------------------------

def defjvp(prim: Primitive, *rules: Callable | None) -> None:
    """One rule per operand: `rule(g, *primals, **params)` is that operand's contribution to the
    output tangent (None: not differentiable in it).  Contributions are summed with add_any."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
        out = prim.bind(*primals, **params)
        total: Any = Zero.like(out)
        for rule, g in zip(rules, tangents):
            if rule is not None and type(g) is not Zero:
                total = add_tangents(total, rule(g, *primals, **params))
        return out, total
    prim.jvp = jvp


def defjvp2(prim: Primitive, *rules: Callable | None) -> None:
    """Like defjvp, but each rule also receives the primal output: `rule(g, ans, *primals)`."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
        out = prim.bind(*primals, **params)
        total: Any = Zero.like(out)
        for rule, g in zip(rules, tangents):
            if rule is not None and type(g) is not Zero:
                total = add_tangents(total, rule(g, out, *primals, **params))
        return out, total
    prim.jvp = jvp


def defjvp_zero(prim: Primitive) -> None:
    """The output does not vary with the inputs (comparisons, integer results)."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
        out = prim.bind(*primals, **params)
        if prim.multiple_results:
            return out, [Zero.like(o) for o in out]
        return out, Zero.like(out)
    prim.jvp = jvp


def unimplemented_rule(prim: Primitive, what: str = "Differentiation") -> Callable:
    """A rule JAX does not define for `prim`: using it raises JAX's NotImplementedError
    (`what` is "Differentiation" for jvp, "Batching" for batch rules)."""
    def rule(*args: Any, **params: Any) -> Any:
        raise NotImplementedError(f"{what} rule for '{prim.name}' not implemented")
    return rule


def deflinear(prim: Primitive, transpose: Callable) -> None:
    """A primitive linear in all its operands: its jvp is itself applied to the tangents."""
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple:
        out = prim.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            return out, Zero.like(out)
        return out, prim.bind(*[instantiate(t) for t in tangents], **params)
    prim.jvp = jvp
    prim.transpose = transpose


# ---------------------------------------------------------------------------------------------
# JVP trace
# ---------------------------------------------------------------------------------------------

class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent", "_aval")
    tracer_name = "JVPTracer"

    def __init__(self, trace: "JVPTrace", primal: Any, tangent: Any):
        self._trace, self.primal, self.tangent = trace, primal, tangent
        self._aval = None

    @property
    def aval(self) -> ShapedArray:
        if self._aval is None:
            self._aval = abstractify(self.primal)
        return self._aval

    def concrete_value(self) -> Any:
        primal = self.primal
        if isinstance(primal, Tracer):
            return primal.concrete_value()
        return np.asarray(primal)


class JVPTrace(Trace):
    """Carries (primal, tangent) pairs; rules run under `parent`."""

    def __init__(self, parent: Trace | None):
        self.parent = parent

    def lift(self, x: Any) -> tuple[Any, Any]:
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        if isinstance(x, Tracer):
            check_alive(x)
        return x, Zero.like(x)

    def process_primitive(self, prim: Primitive, args: tuple, params: dict) -> Any:
        primals, tangents = zip(*(self.lift(x) for x in args)) if args else ((), ())
        with use_trace(self.parent):
            if all(type(t) is Zero for t in tangents):
                return prim.bind(*primals, **params)
            if prim.jvp is None:
                raise NotImplementedError(f"Differentiation rule for '{prim.name}' not "
                                          "implemented")
            out, tangent_out = prim.jvp(primals, tangents, **params)
        if prim.multiple_results:
            return [self.wrap(p, t) for p, t in zip(out, tangent_out)]
        return self.wrap(out, tangent_out)

    def wrap(self, primal: Any, tangent: Any) -> Any:
        return primal if type(tangent) is Zero else JVPTracer(self, primal, tangent)


def jvp_flat(fun: Callable[..., Sequence[Any]], primals: Sequence[Any],
             tangents: Sequence[Any]) -> tuple[list, list]:
    """Push `tangents` (arrays or Zero) through flat `fun` at `primals`."""
    trace = JVPTrace(trace_state.trace)
    args = [trace.wrap(p, t) for p, t in zip(primals, tangents)]
    try:
        with use_trace(trace):
            outs = fun(*args)
    finally:
        trace.finish()
    primal_outs, tangent_outs = [], []
    for out in outs:
        p, t = trace.lift(out)
        primal_outs.append(p)
        tangent_outs.append(t)
    return primal_outs, tangent_outs


# ---------------------------------------------------------------------------------------------
# Partial evaluation: known values are computed now, unknown ones are staged
# ---------------------------------------------------------------------------------------------

class PartialEvalTrace(Trace):
    """Known inputs → compute under `parent`; any unknown input → stage the equation into
    `staging` (a StagingTrace whose constants become the residuals)."""

    #: whether lax.broadcast_in_dim stages identity broadcasts of unknown values here (see
    #: stage_linear_flat)
    keeps_identity_broadcasts = False

    def __init__(self, parent: Trace | None):
        self.parent = parent
        self.staging = StagingTrace()

    def is_unknown(self, x: Any) -> bool:
        return isinstance(x, DynamicJaxprTracer) and x._trace is self.staging

    def new_unknown(self, aval: ShapedArray) -> DynamicJaxprTracer:
        return self.staging.new_arg(aval)

    def process_primitive(self, prim: Primitive, args: tuple, params: dict) -> Any:
        if not prim.partial_eval_known and not any(self.is_unknown(x) for x in args):
            with use_trace(self.parent):
                return prim.bind(*args, **params)
        if prim.partial_eval is not None:
            return prim.partial_eval(self, args, params)
        sub = params.get("jaxpr")
        if isinstance(sub, ClosedJaxpr):  # a call (jit): split its body into known/unknown
            return eval_jaxpr(sub.jaxpr, sub.consts, *args)
        return self.staging.process_primitive(prim, args, params)

    def finish(self) -> None:
        super().finish()
        self.staging.finish()


def linearize_flat(fun: Callable[..., Sequence[Any]], primals: Sequence[Any]
                   ) -> tuple[list, ClosedJaxpr, list[bool], list[bool]]:
    """Primal outputs; the linear jaxpr mapping input tangents to output tangents (its
    constants are the residuals, values of the enclosing trace); which inputs have tangents
    (integer inputs do not) and which outputs have non-zero tangents: the jaxpr's invars and
    outvars are exactly those."""
    pe = PartialEvalTrace(trace_state.trace)
    tangents_in = [pe.new_unknown(aval) if aval.dtype != dtypes.float0 else Zero(aval)
                   for aval in (tangent_aval(abstractify(p)) for p in primals)]
    try:
        with use_trace(pe):
            primal_outs, tangent_outs = jvp_flat(fun, primals, tangents_in)
        out_mask = [type(t) is not Zero for t in tangent_outs]
        outvars = [_tangent_atom(pe, t) for t in tangent_outs if type(t) is not Zero]
        jaxpr = Jaxpr(pe.staging.constvars, pe.staging.invars, outvars, pe.staging.eqns)
        consts = pe.staging.const_values
    finally:
        pe.finish()
    # as JAX's linearize: dead equations, operands (of scans) and residuals dropped
    jaxpr, _ = dce(jaxpr, [True] * len(outvars), prune_equations=True)
    read = {a for e in jaxpr.eqns for a in e.invars} | set(jaxpr.outvars)
    used = [v in read for v in jaxpr.constvars]
    linear = ClosedJaxpr(Jaxpr([v for v, u in zip(jaxpr.constvars, used) if u], jaxpr.invars,
                               jaxpr.outvars, jaxpr.eqns),
                         [c for c, u in zip(consts, used) if u])
    in_mask = [type(t) is not Zero for t in tangents_in]
    return primal_outs, linear, in_mask, out_mask


def stage_linear_flat(fun: Callable[..., Sequence[Any]], avals: Sequence[ShapedArray]
                      ) -> ClosedJaxpr:
    """`fun` staged with every input unknown, as JAX stages a function to transpose: what
    depends on no input is computed under the enclosing trace and enters as a constant; no
    primal is evaluated.  Dead equations are dropped."""
    pe = PartialEvalTrace(trace_state.trace)
    pe.keeps_identity_broadcasts = True  # (as JAX's JaxprTrace, which forwards none)
    args = [pe.new_unknown(a) for a in avals]
    try:
        with use_trace(pe):
            outvars = [_tangent_atom(pe, o) for o in fun(*args)]
        jaxpr = Jaxpr(pe.staging.constvars, pe.staging.invars, outvars, pe.staging.eqns)
        staged = ClosedJaxpr(jaxpr, pe.staging.const_values)
    finally:
        pe.finish()
    return ClosedJaxpr(dce(jaxpr, [True] * len(outvars))[0], staged.consts)


def partial_eval_jaxpr(closed: ClosedJaxpr, unknowns: Sequence[bool],
                       instantiate: Sequence[bool] | bool
                       ) -> tuple[ClosedJaxpr, ClosedJaxpr, list[bool], list[ShapedArray],
                                  list[int | None]]:
    """Split a body into a known and an unknown part (JAX's partial_eval_jaxpr_nounits) by
    running it under a partial-evaluation trace, so that primitives holding bodies split too:
    the known jaxpr maps known inputs to (known outputs, residuals); the unknown jaxpr maps
    (residuals, unknown inputs) to the unknown outputs (those depending on unknown inputs, or
    instantiated).  Residuals are the known values the unknown side reads, in first-use order;
    the last result gives, per residual, the index of the input it is (None if computed)."""
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(closed.out_avals)
    known_trace = StagingTrace()
    pe = PartialEvalTrace(known_trace)
    args = [pe.new_unknown(a) if uk else known_trace.new_arg(a)
            for a, uk in zip(closed.in_avals, unknowns)]
    try:
        with use_trace(pe):
            outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
            out_uk = [pe.is_unknown(o) or bool(inst) for o, inst in zip(outs, instantiate)]
            staged_out = [pe.staging.to_atom(o) for o, uk in zip(outs, out_uk) if uk]
        res_values = list(pe.staging.const_values)
        known_outs = [o for o, uk in zip(outs, out_uk) if not uk]
        with use_trace(known_trace):
            known = known_trace.to_closed_jaxpr([*known_outs, *res_values])
    finally:
        pe.finish()
        known_trace.finish()
    known = ClosedJaxpr(dce(known.jaxpr, [True] * len(known.jaxpr.outvars))[0], known.consts)
    staged = ClosedJaxpr(Jaxpr([], [*pe.staging.constvars, *pe.staging.invars], staged_out,
                               pe.staging.eqns), [])
    position = {id(a): i for i, a in enumerate(args)}
    return (known, staged, out_uk, [v.aval for v in pe.staging.constvars],
            [position.get(id(r)) for r in res_values])


def _tangent_atom(pe: PartialEvalTrace, t: Any) -> Any:
    """The jaxpr atom of an output tangent (a constant when it does not depend on the inputs)."""
    if pe.is_unknown(t):
        return t.jaxpr_var
    return pe.staging.to_atom(t)


# ---------------------------------------------------------------------------------------------
# Transposition
# ---------------------------------------------------------------------------------------------

def backward_pass(linear: ClosedJaxpr, cts_out: Sequence[Any],
                  unwanted: Sequence[int] = ()) -> list[Any]:
    """Cotangents of the linear jaxpr's inputs given those of its outputs (Zero where none,
    and for the inputs numbered in `unwanted`, whose cotangents are not computed)."""
    args = [UndefinedPrimal(v.aval) for v in linear.jaxpr.invars]
    dropped = frozenset(linear.jaxpr.invars[i] for i in unwanted)
    return transpose_jaxpr(linear.jaxpr, linear.consts, args, cts_out, dropped)


def transpose_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any],
                    cts_out: Sequence[Any], dropped: frozenset = frozenset()) -> list[Any]:
    """Cotangents for the UndefinedPrimal entries of `args` (Zero where none).  Equations that
    do not depend on those inputs are evaluated first (recomputed, as remat wants).  The
    cotangents of the inputs in `dropped` are left out, and so is every equation that only
    carries cotangents to them (jax.vjp's DontWant)."""
    env = dict(zip(jaxpr.constvars, consts))
    env.update((v, a) for v, a in zip(jaxpr.invars, args) if not is_undefined(a))
    cts: dict[Var, Any] = {}

    linear_vars = {v for v, a in zip(jaxpr.invars, args) if is_undefined(a)}
    # the linear values whose cotangents reach a wanted input (all of them, mostly)
    live = linear_vars - dropped if dropped else linear_vars

    def add_ct(var: Any, ct: Any) -> None:
        if type(var) is Var and ct is not None and type(ct) is not Zero and var in live:
            cts[var] = add_tangents(cts[var], ct) if var in cts else ct

    for eqn in jaxpr.eqns:
        if any(type(a) is Var and a in linear_vars for a in eqn.invars):
            linear_vars.update(eqn.outvars)
            if live is not linear_vars and any(type(a) is Var and a in live for a in eqn.invars):
                live.update(eqn.outvars)
        else:  # a non-linear equation: compute its value for the transpose rules
            outs = eqn.primitive.bind(*(a.val if type(a) is Literal else env[a]
                                        for a in eqn.invars), **eqn.params)
            env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else (outs,)))
    for var, ct in zip(jaxpr.outvars, cts_out):
        add_ct(var, ct)
    for eqn in reversed(jaxpr.eqns):
        if not any(v in live for v in eqn.outvars):
            continue
        outs_ct = [cts.pop(v, Zero(v.aval)) for v in eqn.outvars]
        if all(type(c) is Zero for c in outs_ct):
            continue
        eqn_args = [UndefinedPrimal(a.aval) if type(a) is Var and a in linear_vars
                    else (a.val if type(a) is Literal else env[a]) for a in eqn.invars]
        rule = eqn.primitive.transpose
        if rule is None:
            raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                      f"'{eqn.primitive.name}' not implemented")
        ct = outs_ct if eqn.primitive.multiple_results else outs_ct[0]
        for a, c in zip(eqn.invars, rule(ct, *eqn_args, **eqn.params)):
            add_ct(a, c)
    return [cts.get(v, Zero(v.aval)) for v, a in zip(jaxpr.invars, args) if is_undefined(a)]
