"""`Box`: JAX's example mutable hijax type, a cell whose contents may change type.

`Box(x)` binds `new_box` then `box_set`; `box.get()` reads through `box_get`, whose `avals`
param is the box's current QDD (`BoxTypeState`: the contents' leaf avals and tree).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyjax._src.core.effects import Effect
from pyjax._src.core.trace import Tracer
from pyjax._src.hijax.primitive import HiPrimitive
from pyjax._src.hijax.types import (
    AvalQDD, MutableHiType, QuasiDynamicData, aval_method, control_flow_allowed_effects,
    cur_qdd, custom_derivatives_allowed_effects, register_hitype)
from pyjax._src.transforms.ad import Zero
from pyjax._src.tree_util import tree_flatten, tree_leaves, tree_unflatten


def new_box() -> Any:
    """An empty box (holding None)."""
    _, treedef = tree_flatten(None)
    return new_box_p.bind(treedef=treedef)


def box_get(box: Any) -> Any:
    state = cur_qdd(box)
    leaves = box_get_p.bind(box, avals=tuple(state.leaf_avals))
    return tree_unflatten(state.treedef, leaves)


def box_set(box: Any, val: Any) -> None:
    leaves, treedef = tree_flatten(val)
    box_set_p.bind(box, *leaves, treedef=treedef)


@dataclass(frozen=True, slots=True)
class BoxTypeState(QuasiDynamicData):
    """What a box holds at one point of the program: leaf avals and tree structure."""
    leaf_avals: tuple
    treedef: Any

    def to_tangent_qdd(self) -> "BoxTypeState":
        return BoxTypeState(tuple(a.to_tangent_aval() for a in self.leaf_avals), self.treedef)


class BoxTy(MutableHiType):
    """The type of every box; what it holds is its QDD."""
    has_qdd = True
    get = aval_method(box_get)
    set = aval_method(box_set)

    def __hash__(self) -> int:
        return hash(BoxTy)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BoxTy)

    def str_short(self, short_dtypes: bool = False, **_: Any) -> str:
        return "BoxTy"

    def __repr__(self) -> str:
        return "BoxTy()"

    def to_tangent_aval(self) -> "BoxTy":
        return BoxTy()


class _BoxMeta(type):
    def __instancecheck__(cls, inst: Any) -> bool:
        return (type.__instancecheck__(cls, inst)
                or isinstance(inst, Tracer) and isinstance(inst.aval, BoxTy))


class Box(metaclass=_BoxMeta):
    """A mutable cell: `Box(x)`, `box.get()`, `box.set(y)`."""
    _val: Any

    def __new__(cls, init_val: Any = None) -> Any:
        box = new_box()
        box.set(init_val)
        return box

    @classmethod
    def _new(cls, init_val: Any) -> "Box":
        new = super().__new__(cls)
        new._val = init_val
        return new

    def get(self) -> Any:
        return box_get(self)

    def set(self, val: Any) -> None:
        box_set(self, val)

    def cur_qdd(self) -> BoxTypeState:
        return self.type_state()

    @property
    def ty(self) -> BoxTy:
        return BoxTy()

    def type_state(self) -> BoxTypeState:
        from pyjax._src.api import typeof
        leaves, treedef = tree_flatten(self._val)
        return BoxTypeState(tuple(typeof(x) for x in leaves), treedef)


register_hitype(Box, lambda b: b.ty)


class BoxEffect(Effect):
    """Reading or writing a box."""


box_effect = BoxEffect()
control_flow_allowed_effects.add_type(BoxEffect)
custom_derivatives_allowed_effects.add_type(BoxEffect)


class NewBox(HiPrimitive):
    def abstract_eval(self, *, treedef: Any) -> Any:
        leaves, treedef = tree_flatten(None)
        return AvalQDD(BoxTy(), BoxTypeState(tuple(leaves), treedef)), {box_effect}

    def to_lojax(self, *, treedef: Any) -> Box:
        return Box._new(None)


class BoxSet(HiPrimitive):
    multiple_results = True

    def abstract_eval(self, box_ty: Any, *leaf_avals: Any, treedef: Any) -> Any:
        box_ty.mutable_qdd.update(BoxTypeState(leaf_avals, treedef))
        return [], {box_effect}

    def to_lojax(self, box: Box, *leaves: Any, treedef: Any) -> list:
        box._val = tree_unflatten(treedef, leaves)
        return []

    def jvp(self, primals: Any, tangents: Any, *, treedef: Any) -> Any:
        box, *vals = primals
        box_dot, *val_dots = tangents
        if type(box_dot) is Zero:
            raise Exception("can't differentiate Box.set operation, "
                            "did you forget jax.lax.stop_gradient?")
        box_set_p.bind(box, *vals, treedef=treedef)
        box_set_p.bind(box_dot, *val_dots, treedef=treedef)
        return [], []


class BoxGet(HiPrimitive):
    multiple_results = True

    def abstract_eval(self, box_ty: Any, *, avals: tuple) -> Any:
        return avals, {box_effect}

    def to_lojax(self, box: Box, *, avals: tuple) -> list:
        return tree_leaves(box._val)

    def jvp(self, primals: Any, tangents: Any, *, avals: tuple) -> Any:
        (box,), (box_dot,) = primals, tangents
        return (box_get_p.bind(box, avals=avals),
                box_get_p.bind(box_dot, avals=tuple(a.to_tangent_aval() for a in avals)))


new_box_p = NewBox("new_box")
box_set_p = BoxSet("box_set")
box_get_p = BoxGet("box_get")
