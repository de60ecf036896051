"""`jax.core` as JAX 0.10.2 has it, mapped onto pyjax's core.

JAX 0.10.2's `jax.core` exports a few names (`PUBLIC`); others are deprecated (they still work,
with a DeprecationWarning: `DEPRECATED`) or removed (an AttributeError saying where they went:
`REMOVED`).  Jaxpr, ClosedJaxpr, Var, Literal, JaxprEqn and Primitive live in
`jax.extend.core` in JAX 0.10.2, so they are mapped here but not exported from `pyjax.core`.
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Sequence, Union

from pyjax._src import errors
from pyjax._src.config import ensure_compile_time_eval
from pyjax._src.core.avals import AbstractValue, ShapedArray
from pyjax._src.core.jaxpr import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from pyjax._src.core.jaxpr import eval_jaxpr as _eval_jaxpr
from pyjax._src.core.primitive import Primitive
from pyjax._src.core.trace import Trace, Tracer, use_trace

JaxprEqn = Eqn
Atom = Union[Var, Literal]
ParamDict = dict[str, Any]
Value = Any


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any,
               propagate_source_info: bool = True) -> list[Any]:
    """Evaluate `jaxpr` on `args` under the current trace (JAX's signature)."""
    return _eval_jaxpr(jaxpr, consts, *args)


def eval_context() -> use_trace:
    """A context in which primitives evaluate eagerly, whatever trace is running."""
    return use_trace(None)


def max_dim(d1: int, d2: int) -> int:
    """The larger of two dimension sizes (pyjax's dimensions are always integers)."""
    return max(operator.index(d1), operator.index(d2))


def min_dim(d1: int, d2: int) -> int:
    """The smaller of two dimension sizes."""
    return min(operator.index(d1), operator.index(d2))


def concrete_or_error(force: Callable[[Any], Any] | None, val: Any, context: str = "") -> Any:
    """`force(val)`, with a tracer replaced by its concrete value; a tracer without one raises
    ConcretizationTypeError with `context` in its message."""
    force = (lambda x: x) if force is None else force
    if isinstance(val, Tracer):
        concrete = val.concrete_value()
        if concrete is None:
            raise errors.ConcretizationTypeError(val, context)
        return force(concrete)
    return force(val)


def valid_jaxtype(x: Any) -> bool:
    """Whether `x` has an abstract value (can be an argument of a traced function)."""
    from pyjax._src.transforms.staging import abstractify
    try:
        abstractify(x)
    except TypeError:
        return False
    return True


def is_concrete(x: Any) -> bool:
    """False only for a tracer whose value is not known while tracing."""
    return not isinstance(x, Tracer) or x.concrete_value() is not None


PUBLIC = ("AbstractValue", "ShapedArray", "Trace", "Tracer", "Atom", "ParamDict", "Value",
          "ensure_compile_time_eval", "eval_context", "eval_jaxpr", "max_dim", "min_dim")

#: deprecated in JAX 0.10.2 (they warn, then work): name -> where JAX says to look instead
#: (None: nowhere).  Values come from jax.extend.core, jax.errors or this module.
_DEPRECATED_TO = {
    **{name: "jax.extend.core" for name in (
        "CallPrimitive", "DebugInfo", "DropVar", "Effect", "Effects", "check_jaxpr",
        "concrete_or_error", "find_top_trace", "gensym", "get_opaque_trace_state",
        "jaxprs_in_params", "new_jaxpr_eqn", "no_effects", "primal_dtype_to_tangent_dtype",
        "valid_jaxtype")},
    "InconclusiveDimensionOperation": "jax.errors", "JaxprTypeError": "jax.errors",
    **{name: None for name in (
        "nonempty_axis_env_DO_NOT_USE", "unsafe_am_i_under_a_jit_DO_NOT_USE",
        "unsafe_am_i_under_a_vmap_DO_NOT_USE", "unsafe_get_axis_names_DO_NOT_USE",
        "is_concrete", "pytype_aval_mappings")},
}


def _deprecated_value(name: str) -> Any:
    from pyjax._src.compat import extend_core
    if name == "is_concrete":
        return is_concrete
    if name == "pytype_aval_mappings":
        from pyjax._src.core.avals import pytype_aval_mappings
        return pytype_aval_mappings
    return getattr(errors, name, None) or getattr(extend_core, name)


def _deprecation_message(name: str) -> str:
    where = _DEPRECATED_TO[name]
    return f"jax.core.{name} is deprecated." + (f" Use {where}.{name}." if where else "")


DEPRECATED = tuple(_DEPRECATED_TO)

_MOVED_TO_EXTEND = ("mapped_aval", "unmapped_aval", "set_current_trace", "take_current_trace",
                    "TraceTag", "call_impl", "subjaxprs", "AbstractToken")

#: removed in JAX 0.10.0: name -> the AttributeError's message
REMOVED: dict[str, str] = {
    "get_aval": "jax.core.get_aval was deprecated in JAX v0.8.2 and removed in JAX v0.10.0; "
                "use jax.typeof instead.",
    "traverse_jaxpr_params": "jax.core.traverse_jaxpr_params was deprecated in JAX v0.8.2 and "
                             "removed in JAX v0.10.0.",
    **{name: (f"jax.core.{name} was deprecated in JAX v0.8.2 and removed in JAX v0.10.0. "
              f"Use jax.extend.core.{name}.") for name in _MOVED_TO_EXTEND},
}


def module_getattr(module_name: str) -> Callable[[str], Any]:
    """The `__getattr__` of a module re-exporting this one: deprecated names warn, removed
    names raise JAX's AttributeError."""
    import functools
    import warnings

    @functools.cache  # as in JAX: each deprecated name warns once
    def getattr_(name: str) -> Any:
        if name in _DEPRECATED_TO:
            warnings.warn(_deprecation_message(name), DeprecationWarning, stacklevel=2)
            return _deprecated_value(name)
        if name in REMOVED:
            raise AttributeError(REMOVED[name])
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
    return getattr_


__all__ = ["ClosedJaxpr", "Jaxpr", "JaxprEqn", "Literal", "Primitive", "Var", *PUBLIC,
           "concrete_or_error", "is_concrete", "valid_jaxtype", "module_getattr"]
