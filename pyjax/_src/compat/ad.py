"""`jax.interpreters.ad` over pyjax's transforms/ad.py: the jvp/transpose registries are views
of the Primitive's `jvp` and `transpose` attributes."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from pyjax._src.compat.linear_util import WrappedFun, transformation2
from pyjax._src.compat.rules import RuleTable
from pyjax._src.core.primitive import Primitive
from pyjax._src.transforms import ad as _ad
from pyjax._src.transforms.ad import (  # noqa: F401  (re-exported)
    JVPTrace, JVPTracer, UndefinedPrimal, Zero, add_any_p, add_tangents, defjvp, defjvp2,
    zeros_like_aval)

primitive_jvps = RuleTable("jvp")
primitive_transposes = RuleTable("transpose")
add_jaxvals_p = add_any_p
instantiate_zeros = _ad.instantiate
is_undefined_primal = _ad.is_undefined


def get_primitive_transpose(prim: Primitive) -> Callable:
    try:
        return primitive_transposes[prim]
    except KeyError as err:
        raise NotImplementedError(
            f"Transpose rule (for reverse-mode differentiation) for '{prim}' not implemented"
        ) from err


def add_jaxvals(x: Any, y: Any) -> Any:
    return add_any_p.bind(x, y)


def deflinear(prim: Primitive, transpose_rule: Callable) -> None:
    """JAX's form: `transpose_rule(ct, **params)` returns the cotangent of every operand."""
    def transpose(ct: Any, *args: Any, **params: Any) -> list:
        if type(ct) is Zero:
            return [None] * len(args)
        return transpose_rule(ct, **params)
    _ad.deflinear(prim, transpose)


def deflinear2(prim: Primitive, transpose_rule: Callable) -> None:
    """Like deflinear, with the operands passed too: `transpose_rule(ct, *args, **params)`."""
    def transpose(ct: Any, *args: Any, **params: Any) -> list:
        if type(ct) is Zero:
            return [None] * len(args)
        return transpose_rule(ct, *args, **params)
    _ad.deflinear(prim, transpose)


def defbilinear(prim: Primitive, lhs_rule: Callable, rhs_rule: Callable) -> None:
    """A primitive linear in each of its two operands; `lhs_rule(ct, x, y, **params)` is the
    cotangent of x when x is the linear input (and `rhs_rule` that of y)."""
    defjvp(prim, lambda g, x, y, **params: prim.bind(g, y, **params),
           lambda g, x, y, **params: prim.bind(x, g, **params))

    def transpose(ct: Any, x: Any, y: Any, **params: Any) -> list:
        if is_undefined_primal(x):
            return [None if type(ct) is Zero else lhs_rule(ct, x, y, **params), None]
        return [None, None if type(ct) is Zero else rhs_rule(ct, x, y, **params)]
    prim.transpose = transpose


def _jvp_rule(call: Callable, instantiate: Any, has_aux: bool, primals: Sequence[Any],
              tangents: Sequence[Any]) -> Any:
    out = _ad.jvp_flat(lambda *xs: _outputs(call, xs, has_aux), primals, tangents)
    outs, touts = out
    if has_aux:  # the last output is the auxiliary value, returned without a tangent
        *outs, aux = outs
        touts = touts[:-1]
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(touts)
    touts = [_ad.instantiate(t) if inst else t for t, inst in zip(touts, instantiate)]
    return (outs, touts, aux) if has_aux else (outs, touts)


def _outputs(call: Callable, xs: Sequence[Any], has_aux: bool) -> list:
    if has_aux:
        outs, aux = call(*xs)
        return [*outs, aux]
    return list(call(*xs))


def jvp(fun: WrappedFun, has_aux: bool = False, instantiate: Any = True,
        transform_stack: bool = True) -> WrappedFun:
    """`fun` (flat arrays in, a list out) as a function of (primals, tangents) returning
    (primal outputs, tangent outputs)."""
    return transformation2(_jvp_rule)(fun, instantiate, has_aux)


__all__ = ["JVPTrace", "JVPTracer", "UndefinedPrimal", "Zero", "add_jaxvals", "add_jaxvals_p",
           "add_tangents", "defbilinear", "defjvp", "defjvp2", "deflinear", "deflinear2",
           "get_primitive_transpose", "instantiate_zeros", "is_undefined_primal", "jvp",
           "primitive_jvps", "primitive_transposes", "zeros_like_aval"]
