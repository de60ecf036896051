"""Algebraic rewrites applied before a jaxpr is compiled, as XLA's simplifier does.

They change results only where XLA's do (log(exp(x)) is x under jit even where exp overflows;
x / c is x * (1/c) for a constant float c; a*b + c is one fused multiply-add, as XLA's CPU
code generator contracts it), so jit matches JAX numerically.  Each rule looks at one
equation, the equations that produced its operands, how often each value is used, and which
operands are constants, and returns replacement equations plus the atom now holding the
result, or None.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from pyjax._src.primitives._fp import ignore_fp_errors, quietly
from pyjax._src.backend.dispatch import to_buffer
from pyjax._src.backend.specialized import exact
from pyjax._src.core import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, has_effects
from pyjax._src.core.primitive import Primitive, registry
from pyjax._src.parallel import propagation

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


def _log_rule(eqn: Eqn, producers: dict, uses: dict, consts: dict) -> Rewrite:
    """log(exp(x)) -> x; log(sqrt(x)) -> 0.5 log(x); log(rsqrt(x)) -> -0.5 log(x)."""
    producer = producers.get(eqn.invars[0])
    name = producer.primitive.name if producer is not None else None
    if name == "exp":
        return [], producer.invars[0]
    if name == "sqrt":
        return _scaled_log(eqn, producer.invars[0], 0.5)
    if name == "rsqrt":
        return _scaled_log(eqn, producer.invars[0], -0.5)
    return None


def _div_rule(eqn: Eqn, producers: dict, uses: dict, consts: dict) -> Rewrite:
    """x / c -> x * (1/c) for a constant floating-point or complex c (bfloat16: in float32);
    x / sqrt(y) -> x * rsqrt(y) and x / rsqrt(y) -> x * sqrt(y) for real floats where
    nothing else reads the root (not bfloat16, whose division XLA has already widened to
    float32 around the root), as XLA rewrites them."""
    from pyjax._src.primitives.elementwise import mul_p, rsqrt_p, sqrt_p
    divisor = eqn.invars[1]
    dtype = eqn.outvars[0].aval.dtype
    if not dtypes.is_inexact(dtype):
        return None
    if type(divisor) is Literal:
        value = divisor.val
    elif divisor in consts:
        value = consts[divisor]
    else:
        root = producers.get(divisor)
        if (root is None or root.primitive.name not in ("sqrt", "rsqrt") or uses[divisor] != 1
                or not dtypes.is_float(dtype) or dtype == dtypes.bfloat16):
            return None
        other = rsqrt_p if root.primitive.name == "sqrt" else sqrt_p
        inverse = Var(divisor.aval)
        return [Eqn(other, list(root.invars), [inverse], dict(root.params)),
                Eqn(mul_p, [eqn.invars[0], inverse], eqn.outvars, {})], eqn.outvars[0]
    # XLA widens bfloat16 arithmetic to float32 before it simplifies: the reciprocal and the
    # product are float32's, rounded to bfloat16 once
    wide = np.dtype(dtypes.float32) if dtype == dtypes.bfloat16 else dtype
    with ignore_fp_errors():
        reciprocal = np.asarray(np.asarray(1, wide) / np.asarray(value, dtype).astype(wide),
                                wide)
    if reciprocal.ndim == 0:
        atom = Literal(reciprocal, ShapedArray((), wide, False))
    else:
        atom = Var(ShapedArray(reciprocal.shape, wide, False))
        consts[atom] = reciprocal
    if wide == dtype:
        return [Eqn(mul_p, [eqn.invars[0], atom], eqn.outvars, {})], eqn.outvars[0]
    from pyjax._src.primitives.elementwise import convert_element_type_p
    out = eqn.outvars[0]
    x = eqn.invars[0]
    widened = Var(ShapedArray(x.aval.shape, wide, False))
    product = Var(ShapedArray(out.aval.shape, wide, False))
    return [Eqn(convert_element_type_p, [x], [widened], {"new_dtype": wide, "weak_type": False}),
            Eqn(mul_p, [widened, atom], [product], {}),
            Eqn(convert_element_type_p, [product], [out],
                {"new_dtype": dtype, "weak_type": out.aval.weak_type})], out


def _scalar_literal(atom: Any) -> bool:
    return type(atom) is Literal and np.ndim(atom.val) == 0


def _is_one(atom: Any, producers: dict) -> bool:
    """A scalar literal 1, or such a literal broadcast (as ones_like makes it)."""
    producer = producers.get(atom) if type(atom) is Var else None
    if producer is not None and producer.primitive.name == "broadcast_in_dim":
        atom = producer.invars[0]
    return _scalar_literal(atom) and np.asarray(atom.val) == 1


def _mul_rule(eqn: Eqn, producers: dict, uses: dict, consts: dict) -> Rewrite:
    """x * 1 -> x (so jit keeps a subnormal x that a multiplication would flush, as XLA's
    simplifier does); (a * c1) * c2 -> a * (c1 * c2) for scalar float constants, as XLA
    reassociates constant factors (so x * 3 / 3 is x * 1.0, hence x, under jit)."""
    out = eqn.outvars[0]
    dtype = out.aval.dtype
    if not dtypes.is_float(dtype):
        return None
    for keep, one in (eqn.invars, eqn.invars[::-1]):
        if _is_one(one, producers) and type(keep) is Var and keep.aval == out.aval:
            return [], keep
    for x, c2 in (eqn.invars, eqn.invars[::-1]):
        inner = producers.get(x) if type(x) is Var and _scalar_literal(c2) else None
        if inner is None or inner.primitive.name != "mul":
            continue
        for a, c1 in (inner.invars, inner.invars[::-1]):
            if _scalar_literal(c1) and not _scalar_literal(a):
                with ignore_fp_errors():
                    folded = np.multiply(np.asarray(c1.val, dtype), np.asarray(c2.val, dtype))
                return [Eqn(eqn.primitive, [a, _literal(folded, dtype)], eqn.outvars, {})], \
                    eqn.outvars[0]
    return None


def _fma_impl(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c rounded once (float32 exactly through float64)."""
    from pyjax._src.primitives.xla_math import _fma, fma_f64
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    if any(v.shape != a.shape and not (v.size == 1 and v.ndim <= a.ndim) for v in (b, c)):
        shape = np.broadcast_shapes(a.shape, b.shape, c.shape)
        if a.shape != shape:  # a rank-0 operand: the kernels compute in a's buffer shape
            a = np.broadcast_to(a, shape)
    with ignore_fp_errors():
        out = _fma(a, b, c) if a.dtype == np.float32 else fma_f64(a, b, c)
    return np.asarray(out).astype(a.dtype, copy=False)


def _fma_specialize(a: ShapedArray, b: ShapedArray, c: ShapedArray) -> Callable | None:
    """_fma_impl of float32 operands, for tier 0: the same float64 steps, without the
    checks, conversions and error-state switch that `_fma_impl` makes on every call (an
    operand of rank 0 broadcasts; `a`'s widened copy is the result's shape)."""
    from pyjax._src.primitives.xla_math import _fma
    if not a.dtype == b.dtype == c.dtype == np.float32:
        return None
    shape = np.broadcast_shapes(a.shape, b.shape, c.shape)
    if a.shape == shape:
        return exact(quietly(_fma))
    return exact(quietly(lambda x, y, z: _fma(np.broadcast_to(x, shape), y, z)))


#: compiler-internal: what an add or subtract of a single-use product becomes.  It only ever
#: appears in jaxprs about to be compiled, never under a trace, so it needs no other rules and
#: stays out of the primitive registry (and its census).
fused_multiply_add_p = Primitive("fused_multiply_add")
fused_multiply_add_p.impl = _fma_impl
fused_multiply_add_p.specialize = _fma_specialize
fused_multiply_add_p.sharding_rule = propagation.elementwise
del registry["fused_multiply_add"]
_FMA_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _single_use_product(atom: Any, producers: dict, uses: dict) -> Eqn | None:
    producer = producers.get(atom) if type(atom) is Var else None
    if producer is not None and producer.primitive.name == "mul" and uses.get(atom) == 1:
        return producer
    return None


def _negated(atom: Any, new: list) -> Any:
    """-atom, as a new literal or a new neg equation appended to `new`."""
    from pyjax._src.primitives.elementwise import neg_p
    if type(atom) is Literal:
        return Literal(np.negative(atom.val), atom.aval)
    out = Var(atom.aval)
    new.append(Eqn(neg_p, [atom], [out], {}))
    return out


def _is_zero(atom: Any) -> bool:
    return _scalar_literal(atom) and not np.any(np.asarray(atom.val))


def _add_rule(eqn: Eqn, producers: dict, uses: dict, consts: dict) -> Rewrite:
    """x + 0 -> x and x - 0 -> x (XLA's simplifier does so for floats too, so jit(x + 0.)
    keeps -0.); otherwise a product may fuse into it (_contract_rule)."""
    x, y = eqn.invars
    out = eqn.outvars[0]
    for keep, zero in ((x, y), (y, x)) if eqn.primitive.name == "add" else ((x, y),):
        if _is_zero(zero) and type(keep) is Var and keep.aval == out.aval:
            return [], keep
    return _contract_rule(eqn, producers, uses, consts)


def _contract_rule(eqn: Eqn, producers: dict, uses: dict, consts: dict) -> Rewrite:
    """add(mul(a, b), c) -> fma(a, b, c), and the subtractions with a negated operand: XLA's
    CPU backend contracts a product used once into the add or subtract consuming it (the
    first operand's product when both are), so float32/float64 results round once."""
    out = eqn.outvars[0]
    if out.aval.dtype not in _FMA_DTYPES:
        return None
    x, y = eqn.invars
    subtract = eqn.primitive.name == "sub"
    new: list[Eqn] = []
    product = _single_use_product(x, producers, uses)
    if product is not None:
        a, b = product.invars
        operands = [a, b, _negated(y, new) if subtract else y]
    else:
        product = _single_use_product(y, producers, uses)
        if product is None:
            return None
        a, b = product.invars
        operands = [_negated(a, new) if subtract else a, b, x]
    return [*new, Eqn(fused_multiply_add_p, operands, [out], {})], out


def _idempotent_rule(eqn: Eqn, producers: dict, uses: dict, consts: dict) -> Rewrite:
    """max(x, x) -> x and min(x, x) -> x, as XLA's simplifier does (a subnormal x stays)."""
    x, y = eqn.invars
    if x is y and type(x) is Var and x.aval == eqn.outvars[0].aval:
        return [], x
    return None


def _empty_reduction_rule(eqn: Eqn, producers: dict, uses: dict, consts: dict) -> Rewrite:
    """A reduction over no axes -> its operand, as XLA's simplifier forwards it."""
    x, = eqn.invars
    if not eqn.params["axes"] and type(x) is Var and x.aval == eqn.outvars[0].aval:
        return [], x
    return None


def _identity_rule(eqn: Eqn, producers: dict, uses: dict, consts: dict) -> Rewrite:
    """stop_gradient(x) -> x: it only matters to differentiation (JAX lowers it to nothing),
    and as a call it would cut the fusion plan (jax.nn.softmax's max between its reduction
    and the clusters that read it back)."""
    x, = eqn.invars
    if type(x) is Var and x.aval == eqn.outvars[0].aval:
        return [], x
    return None


_RULES: dict[str, Callable[[Eqn, dict, dict, dict], Rewrite]] = {
    "stop_gradient": _identity_rule,
    **{name: _empty_reduction_rule for name in ("reduce_sum", "reduce_prod", "reduce_max",
                                                "reduce_min")},
    "max": _idempotent_rule,
    "min": _idempotent_rule,
    "log": _log_rule,
    "div": _div_rule,
    "mul": _mul_rule,
    "add": _add_rule,
    "sub": _add_rule,
}


def _fold(eqn: Eqn) -> Literal | None:
    """The value of a scalar equation of literals, computed now as XLA's constant folding
    computes it (on the host, so a subnormal result is kept), or None."""
    prim = eqn.primitive
    if (not eqn.invars or any(type(a) is not Literal for a in eqn.invars)
            or prim.multiple_results or has_effects(eqn)
            or eqn.outvars[0].aval.shape != () or not prim.foldable):
        return None
    aval = eqn.outvars[0].aval
    with ignore_fp_errors():
        value = prim.impl(*[np.asarray(a.val, a.aval.dtype) for a in eqn.invars], **eqn.params)
    return Literal(np.asarray(value, aval.dtype), aval)


def _use_counts(jaxpr: Jaxpr) -> dict:
    """How many times each variable is read (by equations and as an output); identical
    products count together, since XLA merges them (CSE) before it fuses."""
    uses: dict = {}
    for eqn in jaxpr.eqns:
        for a in eqn.invars:
            if type(a) is Var:
                uses[a] = uses.get(a, 0) + 1
    for v in jaxpr.outvars:
        if type(v) is Var:
            uses[v] = uses.get(v, 0) + 1
    same: dict = {}
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "mul":
            key = tuple(a if type(a) is Var else (a.aval, np.asarray(a.val).tobytes())
                        for a in eqn.invars)
            same.setdefault(key, []).append(eqn.outvars[0])
    for group in same.values():
        if len(group) > 1:
            total = sum(uses.get(v, 0) for v in group)
            uses.update((v, total) for v in group)
    return uses


def simplify(closed: ClosedJaxpr) -> ClosedJaxpr:
    """A rewritten copy of `closed` (the same object when no rule applies)."""
    jaxpr = closed.jaxpr
    consts = {v: to_buffer(c)[0] for v, c in zip(jaxpr.constvars, closed.consts)
              if not hasattr(c, "_trace")}
    producers: dict[Var, Eqn] = {}
    uses = _use_counts(jaxpr)
    renamed: dict[Any, Any] = {}
    eqns: list[Eqn] = []
    changed = False

    def emit(eqn: Eqn) -> None:
        nonlocal changed
        folded = _fold(eqn)
        if folded is not None:
            renamed[eqn.outvars[0]] = folded
            changed = True
            return
        rule = _RULES.get(eqn.primitive.name)
        rewrite = rule(eqn, producers, uses, consts) if rule is not None else None
        if rewrite is None:
            eqns.append(eqn)
            producers.update((v, eqn) for v in eqn.outvars)
            return
        new_eqns, result = rewrite
        changed = True
        if result is not eqn.outvars[0]:
            renamed[eqn.outvars[0]] = result
        for new in new_eqns:  # rewritten equations get their own chance (x/3*3 -> x*1)
            emit(new)

    for eqn in jaxpr.eqns:
        invars = [renamed.get(a, a) if type(a) is Var else a for a in eqn.invars]
        if invars != eqn.invars:
            eqn = Eqn(eqn.primitive, invars, eqn.outvars, eqn.params, eqn.source_info)
        emit(eqn)
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
