"""Type checking of jaxprs: every variable is bound before use and every equation's outputs
have the avals its primitive's abstract rule gives for its inputs.  Run on each staged jaxpr
when `jax_enable_checks` is on (the test suite turns it on)."""
from __future__ import annotations

from pyjax._src.core.jaxpr import Jaxpr, Literal, jaxprs_in_params
from pyjax._src.errors import JaxprTypeError


def check_jaxpr(jaxpr: Jaxpr) -> None:
    """Raise JaxprTypeError naming the first equation whose types do not hold (in the memory
    space staging gives them, once types outside device memory exist)."""
    from pyjax._src.transforms import staging
    bound = set(jaxpr.constvars) | set(jaxpr.invars)
    for i, eqn in enumerate(jaxpr.eqns):
        for atom in eqn.invars:
            if type(atom) is not Literal and atom not in bound:
                raise JaxprTypeError(f"equation {i} ({eqn.primitive}) reads a variable that is "
                                     "not bound before it")
        expected = eqn.primitive.abstract_eval(*[a.aval for a in eqn.invars], **eqn.params)
        if staging.memory_typing is not None:
            expected = staging.memory_typing(eqn.primitive, eqn.invars, expected)
        expected = list(expected) if eqn.primitive.multiple_results else [expected]
        got = [v.aval for v in eqn.outvars]
        if expected != got:
            raise JaxprTypeError(f"equation {i} ({eqn.primitive}) has output types {got}, but "
                                 f"its rule gives {expected}")
        for sub in jaxprs_in_params(eqn.params):
            check_jaxpr(sub)
        bound.update(eqn.outvars)
    for atom in jaxpr.outvars:
        if type(atom) is not Literal and atom not in bound:
            raise JaxprTypeError("an output variable is not bound")
