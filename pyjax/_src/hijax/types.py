"""Hijax types: user-defined abstract values and the quasi-dynamic data (QDD) of mutable ones.

A `HiType` is an immutable user type; a `MutableHiType` (a box, a variable) carries QDD, the
type of its current contents, which changes as the program writes to it but is known
statically at each point.  While staging, each traced mutable value's QDD is kept by its
trace (`qdd_table`) and handed to abstract rules as an `AvalMutableQDD`.
"""
from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import Any, Callable

from pyjax._src.core.avals import AbstractValue, pytype_aval_mappings
from pyjax._src.core.effects import Effect
from pyjax._src.core.trace import Tracer


class aval_property(namedtuple("aval_property", ["fget"])):
    """An aval attribute that a tracer of that aval exposes as a property of itself."""
    __slots__ = ()
    _aval_attribute = "property"


class aval_method(namedtuple("aval_method", ["fun"])):
    """An aval attribute that a tracer of that aval exposes as a method bound to itself."""
    __slots__ = ()
    _aval_attribute = "method"


class QuasiDynamicData:
    """Base of QDD payloads (immutable values describing a mutable value's contents)."""


class MutableQuasiDynamicData:
    """The QDD of one traced mutable value: where staging started and where it is now."""

    def __init__(self, val: QuasiDynamicData | None):
        self.init_val = val
        self.cur_val = val

    def update(self, val: QuasiDynamicData | None) -> None:
        self.cur_val = val

    def __repr__(self) -> str:
        return f"MutableQuasiDynamicData(init_val={self.init_val}, cur_val={self.cur_val})"


@dataclass(frozen=True, slots=True)
class AvalQDD:
    """An abstract rule's output: a mutable hitype with the QDD it starts with."""
    aval: AbstractValue
    qdd: QuasiDynamicData | None
    is_high = True
    has_qdd = True

    def lo_ty(self) -> list:
        return self.aval.lo_ty_qdd(self.qdd)

    def to_tangent_aval(self) -> "AvalQDD":
        return AvalQDD(self.aval.to_tangent_aval(), self.qdd and self.qdd.to_tangent_qdd())


@dataclass(frozen=True, slots=True)
class AvalMutableQDD:
    """An abstract rule's input: a mutable hitype and its QDD, which the rule may update."""
    aval: AbstractValue
    mutable_qdd: MutableQuasiDynamicData


def qdd_table(trace: Any) -> dict:
    """{jaxpr variable: MutableQuasiDynamicData} of a staging trace's mutable values."""
    table = getattr(trace, "_hijax_qdds", None)
    if table is None:
        table = trace._hijax_qdds = {}
    return table


def cur_qdd(x: Any) -> Any:
    """The current QDD of a mutable hijax value (concrete, or traced by jit/make_jaxpr/jvp)."""
    while isinstance(x, Tracer):
        var = getattr(x, "jaxpr_var", None)
        if var is not None:
            qdd = qdd_table(x._trace).get(var)
            if qdd is None:
                raise TypeError(
                    f"the contents of {x.aval.str_short()} are not known to this trace: pyjax "
                    "traces mutable hijax values created inside the traced function only")
            return qdd.cur_val
        primal = getattr(x, "primal", None)
        if primal is None:
            raise TypeError(f"cur_qdd is not supported on {type(x).__name__}")
        x = primal
    return x.cur_qdd()


class HiType(AbstractValue):
    """An immutable user-defined abstract value; subclasses give equality and hashing."""
    is_high = True
    has_qdd = False

    def to_ct_aval(self) -> "HiType":
        return self.to_tangent_aval()


class MutableHiType(AbstractValue):
    """A mutable (and possibly type-changing) user-defined abstract value, with QDD."""
    is_high = True
    has_qdd = True
    is_writer = False
    type_state = aval_method(cur_qdd)

    def to_ct_aval(self) -> AbstractValue:
        return self.to_tangent_aval()


def register_hitype(val_cls: type, typeof_fn: Callable[[Any], AbstractValue]) -> None:
    """Values of `val_cls` have abstract value `typeof_fn(value)` (for `jax.typeof`, tracing)."""
    pytype_aval_mappings[val_cls] = typeof_fn


class EffectTypeSet:
    """A set of effect types (JAX's `effects.EffectTypeSet`): which effects a context allows."""

    def __init__(self) -> None:
        self._types: set[type] = set()

    def add_type(self, effect_type: type[Effect]) -> None:
        self._types.add(effect_type)

    def contains(self, eff: Effect) -> bool:
        return any(isinstance(eff, t) for t in self._types)

    def filter_in(self, effects: Any) -> list:
        return [e for e in effects if self.contains(e)]

    def filter_not_in(self, effects: Any) -> list:
        return [e for e in effects if not self.contains(e)]


control_flow_allowed_effects = EffectTypeSet()
custom_derivatives_allowed_effects = EffectTypeSet()


class MappingSpec:
    """Base of how a hitype maps over a vmapped axis."""


class HiPspec:
    """Base of a hitype's partition spec (shard_map); subclasses map it to lojax specs."""

    def to_lo(self) -> tuple:
        raise NotImplementedError(f"{type(self).__name__} must define to_lo")

    def to_tangent_spec(self) -> "HiPspec":
        raise NotImplementedError(f"{type(self).__name__} must define to_tangent_spec")

    def to_ct_spec(self) -> "HiPspec":
        raise NotImplementedError(f"{type(self).__name__} must define to_ct_spec")
